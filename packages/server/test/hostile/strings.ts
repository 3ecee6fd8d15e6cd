/** Hostile text the suites put into every string field they can reach. */

/** SQL, HTML, entity, escape, template and format metacharacters; each is valid text of at most 50 characters (a tag fits). */
export const METACHARACTERS: readonly string[] = [
  "'; DROP TABLE servers; --",
  '" OR 1=1 --',
  "' OR '1'='1",
  "Robert'); DROP TABLE users;--",
  '<script>alert(1)</script>',
  '<img src=x onerror=alert(1)>',
  '&amp; &lt;b&gt; &#39; &#x3C; &',
  'C:\\Windows\\n \\u0000 \\\\ \\"',
  '%s %n %x {{7*7}} ${7*7} `id`',
  '$1 ? :name @p1 /* c */ -- # ;',
  '\u202e\u{1F525} e\u0301 ẞ \uFFFD 漢字',
  '@everyone <!channel> *bold* _it_ [x](http://e.x)',
];

/** A NUL byte: JSON carries it as \u0000; a control character wherever text is checked. */
export const NUL_TEXT = 'nul\u0000byte';

/** A lone UTF-16 surrogate: valid in a JSON string (\ud800), not Unicode text; a store would keep U+FFFD instead. */
export const LONE_SURROGATE = 'lone \ud800 surrogate';

/** Line breaks and separators that split headers or lines in some reader. */
export const LINE_BREAKS: Readonly<Record<string, string>> = {
  'CR LF': 'web\r\nX-Injected: 1',
  CR: 'web\rX-Injected: 1',
  LF: 'web\nX-Injected: 1',
  TAB: 'web\tX-Injected',
  'NEL (U+0085)': 'web\u0085X-Injected: 1',
  'LINE SEPARATOR (U+2028)': 'web\u2028X-Injected: 1',
  'PARAGRAPH SEPARATOR (U+2029)': 'web\u2029X-Injected: 1',
};

/** Whether the service's plain-text rule refuses `text`: any C0 or C1 control character (U+2028/9 are not controls) or lone surrogate. */
export function isUnstorable(text: string): boolean {
  return /[\p{Cc}\p{Cs}]/u.test(text);
}

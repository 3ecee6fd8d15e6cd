import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { TONE_COLORS } from '../../src/notify/message.js';
import { DISCORD_LIMITS } from '../../src/notify/senders/discord.js';
import { SLACK_LIMITS } from '../../src/notify/senders/slack.js';
import { TELEGRAM_TEXT_MAX } from '../../src/notify/senders/telegram.js';
import { HOSTILE, hostileNotification, sendersAt } from '../helpers/notifications.js';
import { Receiver } from '../helpers/receiver.js';

const receiver = new Receiver();
before(() => receiver.start());
after(() => receiver.stop());
const ctx = () => ({ deliveryId: 'dlv_abcdefghijklmnopqrst', now: new Date('2026-11-22T12:00:01.000Z') });
const BOT_TOKEN = '123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1';

/** Text with its entities decoded, for checking what a reader sees. */
function decoded(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** Every & starts one of the entities the format knows; no half entity survives a cut. */
function assertWholeEntities(text: string): void {
  assert.deepEqual(text.match(/&(?!amp;|lt;|gt;)/g), null, 'a bare or broken entity');
}

describe('telegram sender', () => {
  test('POSTs sendMessage under the bot token with chat_id, HTML text and parse_mode', async () => {
    receiver.reset({ status: 200, body: '{"ok":true,"result":{}}' });
    const result = await sendersAt(receiver.origin, { publicUrl: 'https://kiln.example.com' }).send(
      { type: 'telegram', config: { bot_token: BOT_TOKEN, chat_id: '-1001234567890' } }, hostileNotification(), ctx());
    assert.equal(result.ok, true, result.error ?? '');
    const request = receiver.last();
    assert.equal(request.method, 'POST');
    assert.equal(request.url, `/telegram/bot${BOT_TOKEN}/sendMessage`);
    assert.equal(request.headers['content-type'], 'application/json');
    const body = JSON.parse(request.body);
    assert.deepEqual(Object.keys(body).sort(), ['chat_id', 'link_preview_options', 'parse_mode', 'text']);
    assert.equal(body.chat_id, '-1001234567890');
    assert.equal(body.parse_mode, 'HTML');
    assert.match(body.text, /^<b>\[CRITICAL\] New alert: Disk \/var is 97% full &lt;b&gt;bold\?&lt;\/b&gt; @everyone &lt;!channel&gt; &amp; &amp;amp; &lt;\/pre&gt;/);
    assert.ok(body.text.includes('https://kiln.example.com/servers/srv_abcdefghijklmnopqrst'));
    // Only our own tags remain as markup; everything the agent or user wrote is text.
    assert.deepEqual([...new Set(body.text.match(/<\/?[a-z]+>/g))].sort(), ['</b>', '</i>', '</pre>', '<b>', '<i>', '<pre>']);
    assertWholeEntities(body.text);
  });

  test(`an over-long alert is cut to ${TELEGRAM_TEXT_MAX} characters, tags closed, entities whole`, async () => {
    receiver.reset({ status: 200, body: '{"ok":true}' });
    await sendersAt(receiver.origin).send({ type: 'telegram', config: { bot_token: BOT_TOKEN, chat_id: '42' } }, hostileNotification('alert.raised', { long: true }), ctx());
    const { text } = receiver.lastJson();
    assert.ok(text.length <= TELEGRAM_TEXT_MAX && text.length > TELEGRAM_TEXT_MAX - 20, `length ${text.length}`);
    for (const tag of ['b', 'i', 'pre']) {
      assert.equal(text.split(`<${tag}>`).length, text.split(`</${tag}>`).length, `<${tag}> unbalanced`);
    }
    assertWholeEntities(text);
    assert.ok(!/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/.test(text), 'a split surrogate pair');
    assert.ok(text.includes('…'));
  });

  test('a Telegram error comes back with its status and description', async () => {
    receiver.reset({ status: 400, body: '{"ok":false,"error_code":400,"description":"Bad Request: chat not found"}' });
    const result = await sendersAt(receiver.origin).send({ type: 'telegram', config: { bot_token: BOT_TOKEN, chat_id: '42' } }, hostileNotification(), ctx());
    assert.deepEqual([result.ok, result.retryable, result.httpStatus], [false, false, 400]);
    assert.match(result.error!, /^HTTP 400: .*chat not found/);
    assert.ok(!result.error!.includes(BOT_TOKEN));
  });
});

describe('slack sender', () => {
  test('POSTs text and blocks to the webhook URL, hostile text escaped', async () => {
    receiver.reset({ status: 200, body: 'ok' });
    const result = await sendersAt(receiver.origin).send({ type: 'slack', config: { webhook_url: `${receiver.origin}/services/T0/B0/x` } }, hostileNotification(), ctx());
    assert.equal(result.ok, true);
    assert.equal(receiver.last().url, '/services/T0/B0/x');
    const body = receiver.lastJson();
    assert.deepEqual(Object.keys(body).sort(), ['blocks', 'text']);
    assert.ok(body.text.startsWith('[CRITICAL] New alert: Disk /var is 97% full &lt;b&gt;bold?&lt;/b&gt; @everyone &lt;!channel&gt; &amp; &amp;amp;'));
    assert.deepEqual(body.blocks.map((b: any) => b.type), ['section', 'section', 'section', 'section', 'context']);
    const texts = body.blocks.flatMap((b: any) => [b.text?.text, ...(b.fields ?? []).map((f: any) => f.text), ...(b.elements ?? []).map((e: any) => e.text)]).filter(Boolean);
    for (const text of texts) {
      assert.ok(!text.includes('<!channel>') && !text.includes('<b>'), text);
      assertWholeEntities(text);
    }
    assert.ok(decoded(body.blocks[0].text.text).includes(HOSTILE));
  });

  test('an over-long alert keeps every Block Kit limit', async () => {
    receiver.reset({ status: 200, body: 'ok' });
    await sendersAt(receiver.origin).send({ type: 'slack', config: { webhook_url: `${receiver.origin}/s` } }, hostileNotification('alert.raised', { long: true }), ctx());
    const body = receiver.lastJson();
    assert.ok(body.blocks.length <= SLACK_LIMITS.blocks);
    assert.ok(body.text.length <= SLACK_LIMITS.fallbackText);
    for (const block of body.blocks) {
      if (block.text) assert.ok(block.text.text.length <= SLACK_LIMITS.sectionText, `section of ${block.text.text.length}`);
      if (block.fields) {
        assert.ok(block.fields.length <= SLACK_LIMITS.fields);
        for (const f of block.fields) assert.ok(f.text.length <= SLACK_LIMITS.fieldText);
      }
      if (block.text) assertWholeEntities(block.text.text);
    }
    assert.ok(body.blocks[3].text.text.startsWith('```') && body.blocks[3].text.text.endsWith('```'), 'evidence fence closed');
  });

  test('Slack\'s 404 no_service is final, 429 and 500 are retryable, Retry-After is carried', async () => {
    const target = { type: 'slack' as const, config: { webhook_url: `${receiver.origin}/s` } };
    const senders = sendersAt(receiver.origin);
    receiver.reset({ status: 404, body: 'no_service' });
    assert.deepEqual(await pick(senders.send(target, hostileNotification(), ctx())), [false, false, 404, 'HTTP 404: no_service', null]);
    receiver.reset({ status: 429, body: 'rate_limited', headers: { 'retry-after': '7' } });
    assert.deepEqual(await pick(senders.send(target, hostileNotification(), ctx())), [false, true, 429, 'HTTP 429: rate_limited', 7]);
    receiver.reset({ status: 500, body: '' });
    assert.deepEqual(await pick(senders.send(target, hostileNotification(), ctx())), [false, true, 500, 'HTTP 500', null]);
    receiver.reset({ status: 408, body: 'timeout' });
    assert.equal((await senders.send(target, hostileNotification(), ctx())).retryable, true);
  });
});

async function pick(pending: Promise<{ ok: boolean; retryable: boolean; httpStatus: number | null; error: string | null; retryAfterSeconds: number | null }>) {
  const r = await pending;
  return [r.ok, r.retryable, r.httpStatus, r.error, r.retryAfterSeconds];
}

describe('discord sender', () => {
  test('POSTs content and one embed coloured by severity, with mentions switched off', async () => {
    const cases = [
      ['alert.raised', 'critical', TONE_COLORS.critical], ['alert.occurred', 'warning', TONE_COLORS.warning],
      ['alert.raised', 'info', TONE_COLORS.info], ['alert.resolved', 'critical', TONE_COLORS.resolved],
    ] as const;
    for (const [event, severity, colour] of cases) {
      receiver.reset({ status: 204 });
      const result = await sendersAt(receiver.origin).send(
        { type: 'discord', config: { webhook_url: `${receiver.origin}/api/webhooks/1/tok` } }, hostileNotification(event, { severity }), ctx());
      assert.equal(result.ok, true);
      assert.equal(receiver.last().url, '/api/webhooks/1/tok');
      const body = receiver.lastJson();
      assert.deepEqual(Object.keys(body).sort(), ['allowed_mentions', 'content', 'embeds']);
      assert.deepEqual(body.allowed_mentions, { parse: [] });
      assert.equal(body.embeds.length, 1);
      assert.equal(body.embeds[0].color, colour, `${event} ${severity}`);
      assert.equal(body.embeds[0].timestamp, '2026-11-22T12:00:00.000Z');
    }
    assert.match(receiver.lastJson().content, /^\[RESOLVED\] Resolved: Disk \/var/);
  });

  test('an over-long alert keeps every embed limit and the 6000 total', async () => {
    receiver.reset({ status: 204 });
    await sendersAt(receiver.origin).send({ type: 'discord', config: { webhook_url: `${receiver.origin}/d` } }, hostileNotification('alert.raised', { long: true }), ctx());
    const { content, embeds: [embed] } = receiver.lastJson();
    const L = DISCORD_LIMITS;
    assert.ok(content.length <= L.content);
    assert.ok(embed.title.length <= L.title);
    assert.ok(embed.description.length <= L.description);
    assert.ok(embed.fields.length <= L.fields);
    for (const f of embed.fields) assert.ok(f.name.length <= L.fieldName && f.value.length <= L.fieldValue);
    const total = embed.title.length + embed.description.length + embed.footer.text.length
      + embed.fields.reduce((n: number, f: any) => n + f.name.length + f.value.length, 0);
    assert.ok(total <= L.total, `total ${total}`);
  });
});

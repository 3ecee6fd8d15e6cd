/**
 * Paths pino removes from every log line. Request bodies and headers are not
 * logged at all by default; this is the second line of defence for places
 * that log objects which may carry a credential.
 */
export const logRedaction = {
  paths: [
    'req.headers.authorization',
    'req.headers.cookie',
    'headers.authorization',
    '*.password',
    '*.token',
    '*.secret',
    '*.api_key',
    '*.collector_key',
    '*.bot_token',
    '*.routing_key',
    '*.webhook_url',
    'password',
    'token',
    'secret',
  ],
  censor: '[redacted]',
};

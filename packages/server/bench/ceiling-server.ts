// The ceiling the ingest benchmark compares against: a bare Fastify route
// that only parses the JSON body and answers, in its own process like Kiln.
import Fastify from 'fastify';

const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
app.post('/api/v1/ingest', async (request) => ({ success: true, received: typeof request.body === 'object' }));
const address = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`listening ${address}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));

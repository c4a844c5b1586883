// `GET /api/health` probed from a process of its own, as a monitor probes a service: the 8 chains'
// stream clients in the bench's process do not delay this client's timers or reads. Started with
// fork(); { url, token } makes one warm-up probe and answers { ready: true } (so the process has
// booted and its connection is open before the measured phase); { start: true } starts sequential
// probes (each sent when the previous one was answered) over that kept-alive loopback connection;
// { stop: true } ends them and is answered with { latencies, statuses } (latency: request written →
// answer read, ms).
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';

const agent = new Agent({ keepAlive: true, maxSockets: 1 });
let stopping = false;
let running;

function probe(url, token) {
  return new Promise((resolve, reject) => {
    const req = request({ agent, host: url.hostname, port: url.port, path: '/api/health', method: 'GET', headers: { 'x-fengyu-token': token } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

async function loop({ url, token }) {
  const latencies = [];
  const statuses = {};
  while (!stopping) {
    const t = performance.now();
    const status = await probe(url, token);
    latencies.push(performance.now() - t);
    statuses[status] = (statuses[status] ?? 0) + 1;
  }
  return { latencies, statuses };
}

let target;
process.on('message', async (msg) => {
  if (msg.url) {
    target = { url: new URL(msg.url), token: msg.token };
    const status = await probe(target.url, target.token);
    process.send({ ready: true, status });
  } else if (msg.start) {
    running = loop(target);
  } else if (msg.stop) {
    stopping = true;
    const result = await running;
    process.send(result, () => process.exit(0));
  }
});

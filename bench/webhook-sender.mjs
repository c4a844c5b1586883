// The webhook benchmark's HTTP client, in its own process (a webhook sender is a separate
// program): it does not share the server's event loop or its CPU time. Started with fork(); each
// IPC message { url, headers, body, total, inFlight, eventPrefix? } runs one load — `inFlight`
// requests kept in flight over keep-alive connections, `total` in all, each with a new
// `X-FengYu-Event-Id` (`eventPrefix-<i>`) when eventPrefix is set — and answers
// { perSecond, latencies, statuses } (latency: request written → answer read, ms). With `rate`
// set instead of `inFlight`, the load is paced (open loop, below).
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';

const agents = new Map();

function post(agent, url, headers, body) {
  return new Promise((resolve, reject) => {
    const req = request({ agent, host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function load({ url: href, headers, body, total, inFlight, eventPrefix }) {
  const url = new URL(href);
  let agent = agents.get(url.host);
  if (!agent) {
    agent = new Agent({ keepAlive: true, maxSockets: inFlight });
    agents.set(url.host, agent);
  }
  const latencies = [];
  const statuses = {};
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < total) {
        const i = next++;
        const h = eventPrefix === undefined ? headers : { ...headers, 'x-fengyu-event-id': `${eventPrefix}-${i}` };
        const s = performance.now();
        const status = await post(agent, url, h, body);
        latencies.push(performance.now() - s);
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }),
  );
  return { perSecond: total / ((performance.now() - t0) / 1000), latencies, statuses };
}

// Open loop: request i is due at t0 + i / rate, sent at its due time (or at once when the sender
// is late), over up to 64 kept-alive connections; its latency is counted from its due time, so
// a server that falls behind is charged for the whole backlog, not only for its answer time.
async function paced({ url: href, headers, body, total, rate, eventPrefix }) {
  const url = new URL(href);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const latencies = [];
  const statuses = {};
  const interval = 1000 / rate;
  const t0 = performance.now();
  let sent = 0;
  let done = 0;
  let lastEnd = t0;
  await new Promise((resolve, reject) => {
    const tick = () => {
      const now = performance.now();
      while (sent < total && t0 + sent * interval <= now) {
        const i = sent++;
        const due = t0 + i * interval;
        const h = eventPrefix === undefined ? headers : { ...headers, 'x-fengyu-event-id': `${eventPrefix}-${i}` };
        post(agent, url, h, body).then((status) => {
          lastEnd = performance.now();
          latencies.push(lastEnd - due);
          statuses[status] = (statuses[status] ?? 0) + 1;
          if (++done === total) resolve();
        }, reject);
      }
      if (sent < total) setTimeout(tick, 0);
    };
    tick();
  });
  agent.destroy();
  return { perSecond: total / ((lastEnd - t0) / 1000), latencies, statuses };
}

process.on('message', (msg) => {
  if (msg === 'exit') {
    for (const a of agents.values()) a.destroy();
    process.disconnect();
    return;
  }
  (msg.rate ? paced(msg) : load(msg)).then(
    (result) => process.send({ ok: true, result }),
    (err) => process.send({ ok: false, error: String(err?.stack ?? err) }),
  );
});
process.send({ ready: true });

// FengYu's service worker: it keeps the application shell (the page, its scripts, styles and
// icons) so the installed app opens in its own window, and nothing else. API answers, streams and
// metrics always go to the host and are never stored: they carry the owner's data.
const SHELL = 'fengyu-shell-v1';
const NEVER = ['/api', '/metrics'];

self.addEventListener('install', (event) => {
  event.waitUntil(
    caches
      .open(SHELL)
      .then((cache) => cache.addAll(['/', '/manifest.webmanifest', '/icons/icon-192.png']))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) => Promise.all(keys.filter((k) => k !== SHELL).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

function isShell(url) {
  if (url.origin !== self.location.origin) return false;
  const path = url.pathname.toLowerCase();
  return !NEVER.some((p) => path === p || path.startsWith(`${p}/`));
}

self.addEventListener('fetch', (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== 'GET' || !isShell(url) || url.search.includes('token=')) return;
  if (request.mode === 'navigate') {
    // The page: the host's current one when it answers, else the kept shell.
    event.respondWith(
      fetch(request)
        .then((res) => {
          if (res.ok) caches.open(SHELL).then((c) => c.put('/', res.clone()));
          return res;
        })
        .catch(() => caches.match('/')),
    );
    return;
  }
  // Hashed assets and icons never change under one name: the kept copy is as good as new.
  event.respondWith(
    caches.match(request).then(
      (kept) =>
        kept ??
        fetch(request).then((res) => {
          if (res.ok && res.type === 'basic') caches.open(SHELL).then((c) => c.put(request, res.clone()));
          return res;
        }),
    ),
  );
});

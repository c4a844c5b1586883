import '@vue-flow/core/dist/style.css';
import '@vue-flow/core/dist/theme-default.css';
import '@vue-flow/controls/dist/style.css';
import '@vue-flow/minimap/dist/style.css';
import './styles/app.css';
import './styles/canvas.css';
import { createPinia } from 'pinia';
import { createApp } from 'vue';
import { captureToken } from './api/token';
import App from './App.vue';
import { useConnection } from './app/connection.store';
import { createServices, SERVICES } from './app/services';
import { createUiI18n, initialLocale } from './i18n/index';
import { createUiRouter } from './router';

const pinia = createPinia();
const i18n = createUiI18n(initialLocale(window.localStorage, navigator.language));
const services = createServices({
  storage: window.localStorage,
  locale: () => i18n.global.locale.value,
  onStatus: (status) => useConnection(pinia).report(status),
});
captureToken(window, services.tokens);

const app = createApp(App);
app.use(pinia);
app.use(i18n);
app.provide(SERVICES, services);
app.use(createUiRouter());
app.mount('#app');

// The installable app: the service worker keeps the shell only (never API data).
if ('serviceWorker' in navigator && window.isSecureContext) {
  window.addEventListener('load', () => {
    navigator.serviceWorker.register('/sw.js').catch(() => undefined);
  });
}

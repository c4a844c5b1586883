import { createRouter, createWebHistory, type RouteLocationNormalizedLoaded, type RouteRecordRaw, type Router, type RouterHistory } from 'vue-router';
import NotFound from './components/NotFound.vue';

/**
 * Every route of the UI, in one place. Pages live in `src/pages/<page>/` and load on first visit;
 * add a line here for a new page (and a sidebar entry in `app/nav.ts`). The bare address opens
 * the Flows library; any other address shows the not-found page (the host answers every page
 * address with the app, so deep links and reloads land here).
 */
export const ROUTES: RouteRecordRaw[] = [
  { path: '/', redirect: '/flows' },
  { name: 'flows', path: '/flows', component: () => import('./pages/flows/FlowsLibraryPage.vue') },
  { name: 'builder', path: '/flows/:id', component: () => import('./pages/builder/BuilderPage.vue') },
  { name: 'agent', path: '/agent', component: () => import('./pages/agent/AgentPage.vue') },
  { name: 'runs', path: '/runs', component: () => import('./pages/runs/RunsPage.vue') },
  { name: 'inbox', path: '/inbox', component: () => import('./pages/inbox/InboxPage.vue') },
  { name: 'schedules', path: '/schedules', component: () => import('./pages/schedules/SchedulesPage.vue') },
  { name: 'plugins', path: '/plugins', component: () => import('./pages/plugins/PluginsPage.vue') },
  { name: 'memory', path: '/memory', component: () => import('./pages/memory/MemoryPage.vue') },
  { name: 'settings', path: '/settings', component: () => import('./pages/settings/SettingsPage.vue') },
  { name: 'chat', path: '/chat', component: () => import('./pages/chat/ChatPage.vue') },
  { name: 'notFound', path: '/:unknown(.*)*', component: NotFound },
];

/** The UI's router: real paths in the address bar (history mode), matched case-sensitively. */
export function createUiRouter(history: RouterHistory = createWebHistory()): Router {
  return createRouter({ history, routes: ROUTES, sensitive: true });
}

/** A path parameter as one string (`''` when absent). */
export function routeParam(route: RouteLocationNormalizedLoaded, key: string): string {
  const v = route.params[key];
  return (Array.isArray(v) ? v[0] : v) ?? '';
}

/** A query parameter as one string, the first when repeated (`''` when absent). */
export function routeQuery(route: RouteLocationNormalizedLoaded, key: string): string {
  const v = route.query[key];
  return (Array.isArray(v) ? v[0] : v) ?? '';
}

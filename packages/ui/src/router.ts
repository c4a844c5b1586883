import type { RouteDef } from './app/router-core';

/**
 * Every route of the UI, in one place. Pages live in `src/pages/<page>/`; add a line here for a
 * new page (and a sidebar entry in `app/nav.ts`).
 */
export const ROUTES: RouteDef[] = [
  { name: 'flows', path: '/flows', component: () => import('./pages/flows/FlowsLibraryPage.vue') },
  { name: 'builder', path: '/flows/:id', component: () => import('./pages/builder/BuilderPage.vue') },
  { name: 'agent', path: '/agent', component: () => import('./pages/agent/AgentPage.vue') },
  { name: 'runs', path: '/runs', component: () => import('./pages/runs/RunsPage.vue') },
  { name: 'schedules', path: '/schedules', component: () => import('./pages/schedules/SchedulesPage.vue') },
  { name: 'plugins', path: '/plugins', component: () => import('./pages/plugins/PluginsPage.vue') },
  { name: 'settings', path: '/settings', component: () => import('./pages/settings/SettingsPage.vue') },
  { name: 'chat', path: '/chat', component: () => import('./pages/chat/ChatPage.vue') },
];

import type { IconName } from './icons';

/** The sidebar, in order. `key` is both the i18n key (`common.nav.<key>`) and the route path. */
export const NAV: Array<{ key: string; path: string; icon: IconName }> = [
  { key: 'flows', path: '/flows', icon: 'flow' },
  { key: 'agent', path: '/agent', icon: 'model' },
  { key: 'runs', path: '/runs', icon: 'history' },
  { key: 'inbox', path: '/inbox', icon: 'approval' },
  { key: 'schedules', path: '/schedules', icon: 'clock' },
  { key: 'plugins', path: '/plugins', icon: 'plug' },
  { key: 'memory', path: '/memory', icon: 'memory' },
  { key: 'settings', path: '/settings', icon: 'settings' },
  { key: 'chat', path: '/chat', icon: 'chat' },
];

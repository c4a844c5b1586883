import type { TaskRegistry } from './task-registry';

/**
 * What the routes, tools and other domains use of the task executor: the single host's
 * `TaskRegistry` (one process, the SQLite file) or the shared deployment's `SharedTaskRegistry`
 * (several hosts, one PostgreSQL queue).
 */
export type TaskExecutor = Pick<TaskRegistry, 'submit' | 'get' | 'list' | 'output' | 'wait' | 'kill' | 'capacity' | 'globalCapacity' | 'onFinished' | 'snapshot' | 'recover' | 'close'> &
  Partial<Pick<TaskRegistry, 'resumeQueued'>>;

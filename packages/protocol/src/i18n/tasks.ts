/** Messages of the background tasks domain, in both languages. */
export const en: Record<string, string> = {
  task_not_found: 'Task {id} was not found.',
  task_field_invalid: 'Field "{field}" is invalid: expected {allowed}.',
  task_host_stopping: 'The host is stopping; no new tasks are accepted.',
  task_interrupted: 'The host stopped while this task was queued or running; it is not run again.',
  task_cancelled: 'The task was killed.',
};

export const zhCN: Record<string, string> = {
  task_not_found: '未找到任务 {id}。',
  task_field_invalid: '字段“{field}”无效：应为 {allowed}。',
  task_host_stopping: '主机正在停止，不再接受新任务。',
  task_interrupted: '任务排队或运行期间主机已停止；该任务不会再次运行。',
  task_cancelled: '任务已被终止。',
};

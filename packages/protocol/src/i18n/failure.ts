/** Messages of failure handling: failed commands, step timeouts, error workflows, retry. */
export const en: Record<string, string> = {
  command_exit_nonzero: 'The command exited with status {exitCode}.{tail}',
  command_timeout: 'The command did not finish within {seconds} s and was stopped.{tail}',
  command_killed: 'The command was killed by signal {signal}.{tail}',
  step_timeout: 'Step "{stepId}" did not finish within its timeout of {timeoutMs} ms and was stopped.',
  step_timeout_range: 'Step "{stepId}": timeoutMs must be an integer between {min} and {max} milliseconds (1 s to 1 h), not {timeoutMs}.',
  run_not_retryable: 'Run {runId} is {status}: only a failed or interrupted run can be retried from its failed step.',
  retry_version_invalid: 'version must be "original" or "current", not {version}.',
  retry_no_current_version: 'Run {runId} did not come from a workflow that has a published version: retry it with version "original".',
  step_failed: 'The step failed: {reason}',
  error_workflow_unknown: 'errorWorkflowId {errorWorkflowId} names no workflow of yours.',
  error_workflow_unpublished: 'errorWorkflowId {errorWorkflowId} names a workflow that has never been published: publish it first.',
  error_workflow_no_failed_run: 'errorWorkflowId {errorWorkflowId}: the error workflow needs an object input named failedRun in its input schema.',
  error_workflow_self: 'errorWorkflowId cannot name the workflow itself.',
};

export const zhCN: Record<string, string> = {
  command_exit_nonzero: '命令以状态码 {exitCode} 退出。{tail}',
  command_timeout: '命令未能在 {seconds} 秒内完成，已被终止。{tail}',
  command_killed: '命令被信号 {signal} 终止。{tail}',
  step_timeout: '步骤 "{stepId}" 未能在超时时间 {timeoutMs} 毫秒内完成，已被终止。',
  step_timeout_range: '步骤 "{stepId}"：timeoutMs 必须是 {min} 到 {max} 毫秒（1 秒到 1 小时）之间的整数，而不是 {timeoutMs}。',
  run_not_retryable: '运行 {runId} 的状态是 {status}：只有失败或被中断的运行才能从失败的步骤重试。',
  retry_version_invalid: 'version 必须是 "original" 或 "current"，而不是 {version}。',
  retry_no_current_version: '运行 {runId} 并非来自一个已发布的工作流：请以 version "original" 重试。',
  step_failed: '步骤执行失败：{reason}',
  error_workflow_unknown: 'errorWorkflowId {errorWorkflowId} 不是你的任何工作流。',
  error_workflow_unpublished: 'errorWorkflowId {errorWorkflowId} 指向的工作流从未发布：请先发布它。',
  error_workflow_no_failed_run: 'errorWorkflowId {errorWorkflowId}：错误处理工作流的输入模式中需要一个名为 failedRun 的对象输入。',
  error_workflow_self: 'errorWorkflowId 不能指向工作流自身。',
};

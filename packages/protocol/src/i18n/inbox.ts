/** Messages of the inbox (people in the loop), in both languages. */
export const en: Record<string, string> = {
  inbox_item_not_found: 'Inbox item {id} was not found.',
  inbox_item_settled: 'Inbox item {id} is no longer pending (it was {outcome}).',
  inbox_cursor_invalid: 'The cursor is not one from a previous page of the inbox.',
  gate_expired: 'Nobody answered the {kind} of step "{stepId}" before {expiresAt}.',
  inbox_notifications_invalid: 'notifications.email needs "accountId" (an e-mail account) and "to" (an e-mail address): {reason}',
  input_form_invalid: 'Step "{stepId}": the form is not valid at {field}: {reason}.',
  input_in_foreach: 'Step "{stepId}" is an input inside a loop body; input steps cannot be in a loop (ask once before the loop, or call a published workflow per item).',
  input_timeout_range: 'Input step "{stepId}": timeoutMs must be between {min} and {max} ms (1 minute to 30 days); it is {timeoutMs}.',
  input_on_timeout_invalid: 'Input step "{stepId}": onTimeout must be "fail" or "default", not "{value}".',
  input_defaults_required: 'Input step "{stepId}" has onTimeout "default", so it needs "defaults".',
  input_defaults_invalid: 'Input step "{stepId}": default "{field}" {reason}.',
  input_value_invalid: 'Field "{field}" {reason}.',
  input_values_invalid: 'The values do not fit the form ({fields}); the input is still pending.',
  no_pending_input: 'Run {runId} has no pending input.',
};

export const zhCN: Record<string, string> = {
  inbox_item_not_found: '未找到收件箱条目 {id}。',
  inbox_item_settled: '收件箱条目 {id} 已不再等待处理（已{outcome}）。',
  inbox_cursor_invalid: '该游标不是来自收件箱上一页的游标。',
  gate_expired: '步骤“{stepId}”的{kind}在 {expiresAt} 之前无人答复。',
  inbox_notifications_invalid: 'notifications.email 需要 "accountId"（电子邮件账户）和 "to"（电子邮件地址）：{reason}',
  input_form_invalid: '步骤“{stepId}”：表单在 {field} 处无效：{reason}。',
  input_in_foreach: '步骤“{stepId}”是循环体内的输入步骤；输入步骤不能放在循环中（请在循环前询问一次，或为每一项调用已发布的工作流）。',
  input_timeout_range: '输入步骤“{stepId}”：timeoutMs 必须在 {min} 到 {max} 毫秒之间（1 分钟到 30 天）；当前为 {timeoutMs}。',
  input_on_timeout_invalid: '输入步骤“{stepId}”：onTimeout 必须是 "fail" 或 "default"，而不是 "{value}"。',
  input_defaults_required: '输入步骤“{stepId}”的 onTimeout 为 "default"，因此需要 "defaults"。',
  input_defaults_invalid: '输入步骤“{stepId}”：默认值“{field}”{reason}。',
  input_value_invalid: '字段“{field}”{reason}。',
  input_values_invalid: '这些值不符合表单（{fields}）；输入仍在等待。',
  no_pending_input: '运行 {runId} 没有待处理的输入。',
};

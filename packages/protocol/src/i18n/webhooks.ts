/** Messages of the webhooks domain (error codes and problem codes), in both languages. */
export const en: Record<string, string> = {
  // errors
  webhook_trigger_not_found: 'Webhook trigger {id} was not found (it was deleted, or its workflow was).',
  webhook_secret_invalid: 'The webhook secret is missing or wrong: send the secret shown when the trigger was created (or last rotated) in the X-FengYu-Webhook-Secret header.',
  webhook_peer_forbidden: 'Webhook deliveries are accepted only from this computer (a loopback address); this one came from {address}.',
  webhook_event_id_invalid: 'The X-FengYu-Event-Id header is invalid: {reason}. Use 1 to 200 characters.',
  webhook_trigger_paused: 'Webhook trigger {id} is paused because plugin sandboxing was turned off after it was created; it resumes when sandboxing is back on.',
  webhook_event_interrupted: 'This event id was claimed by a delivery that a host stop interrupted before its task was submitted, so it is never replayed. Check whether the work happened, then send it again with a new event id.',
  webhook_inputs_unbindable: 'A webhook call cannot bring a file or a folder, and this workflow needs {fields}. Start it from the Run dialog (Start run or Run in background), or create a schedule: there you pick the file once and the schedule keeps it.',
  webhook_defaults_invalid: 'The trigger defaults are invalid: {fields}.',
  webhook_body_invalid: 'The delivery body is invalid: {fields}.',
  webhook_cursor_invalid: 'The cursor is not one this list returned.',
  // problems (details[])
  webhook_field_undeclared: 'Field "{input}" is not an input of this workflow.',
  webhook_body_not_object: 'The body must be a JSON object whose fields are workflow inputs.',
  webhook_input_file: 'Input "{input}" needs a file, which a webhook call cannot bring.',
  webhook_input_shared_directory: 'Input "{input}" is a folder created for each run, which a run started by a webhook does not get.',
};

export const zhCN: Record<string, string> = {
  webhook_trigger_not_found: '未找到 Webhook 触发器 {id}（它或其工作流已被删除）。',
  webhook_secret_invalid: 'Webhook 密钥缺失或错误：请在 X-FengYu-Webhook-Secret 请求头中发送创建（或最近一次轮换）触发器时显示的密钥。',
  webhook_peer_forbidden: 'Webhook 投递只接受来自本机（回环地址）的请求；此请求来自 {address}。',
  webhook_event_id_invalid: 'X-FengYu-Event-Id 请求头无效：{reason}。请使用 1 到 200 个字符。',
  webhook_trigger_paused: 'Webhook 触发器 {id} 已暂停：它创建之后插件沙箱被关闭；重新开启沙箱后会自动恢复。',
  webhook_event_interrupted: '此事件 ID 已被一次投递占用，但该投递在提交任务前因主机停止而中断，因此永远不会重放。请先确认相关工作是否已完成，再用新的事件 ID 重新发送。',
  webhook_inputs_unbindable: 'Webhook 调用无法携带文件或文件夹，而此工作流需要 {fields}。请在运行对话框中启动（开始运行或后台运行），或创建计划：在计划中只需选择一次文件，计划会一直保留它。',
  webhook_defaults_invalid: '触发器默认值无效：{fields}。',
  webhook_body_invalid: '投递请求体无效：{fields}。',
  webhook_cursor_invalid: '该游标不是此列表返回的。',
  webhook_field_undeclared: '字段“{input}”不是此工作流的输入项。',
  webhook_body_not_object: '请求体必须是一个 JSON 对象，其字段为工作流输入项。',
  webhook_input_file: '输入项“{input}”需要一个文件，而 Webhook 调用无法携带文件。',
  webhook_input_shared_directory: '输入项“{input}”是每次运行时创建的文件夹，由 Webhook 启动的运行不会获得它。',
};

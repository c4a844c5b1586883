/** Messages of the models domain (chat backends, model steps, chat, memory), in both languages. */
export const en: Record<string, string> = {
  unknown_backend: 'Backend "{backend}" is not configured (configured: {ids}). Add it under Settings → Chat backends.',
  default_backend_unknown: 'The default backend "{backend}" names no configured backend: add it to "backends" first, or choose one of the configured ones.',
  backend_key_missing: 'Backend "{backend}" has no API key: set "apiKey", or "apiKeyEnv" naming a set environment variable (now: {env}).',
  backend_key_env_forbidden:
    'Backend "{backend}" names the environment variable {env} in "apiKeyEnv": only the primary owner may read a key from the host\'s environment. Enter the key itself in "apiKey".',
  backend_key_env_reserved:
    'Backend "{backend}" names {env} in "apiKeyEnv": variables starting with FENGYU_ hold the host\'s own token and settings and are never sent to a backend.',
  secret_reentry_required:
    'The address of "{name}" changed ({from} → {to}): enter {secret} again. A stored secret never follows a new address; "[redacted]" keeps it only while the address stays the same.',
  model_failed: 'The model backend "{backend}" failed: {reason}',
  model_cancelled: 'The call to model backend "{backend}" was cancelled.',
  conversation_not_found: 'Conversation {conversationId} was not found.',
  chat_no_pending_gate: 'Conversation {conversationId} has no pending approval "{gateId}".',
  chat_busy: 'Conversation {conversationId} is already answering a message; wait for it to finish.',
  memory_full: 'Memory is full ({max} entries); forget some before remembering more.',
  memory_not_found: 'Memory {id} was not found.',
  memory_cursor_invalid: 'The cursor is not one from a previous page of your memories; start again from the first page.',
};

export const zhCN: Record<string, string> = {
  unknown_backend: '后端 "{backend}" 未配置（已配置：{ids}）。请在“设置 → 聊天后端”中添加。',
  default_backend_unknown: '默认后端 "{backend}" 不是已配置的后端：请先将其加入 "backends"，或从已配置的后端中选择。',
  backend_key_missing: '后端 "{backend}" 没有 API 密钥：请设置 "apiKey"，或用 "apiKeyEnv" 指定一个已设置的环境变量（当前：{env}）。',
  backend_key_env_forbidden: '后端 "{backend}" 在 "apiKeyEnv" 中指定了环境变量 {env}：只有主所有者可以从主机环境变量读取密钥。请直接在 "apiKey" 中填写密钥。',
  backend_key_env_reserved: '后端 "{backend}" 在 "apiKeyEnv" 中指定了 {env}：以 FENGYU_ 开头的变量保存主机自身的令牌和设置，绝不会发送给后端。',
  secret_reentry_required: '"{name}" 的地址已更改（{from} → {to}）：请重新输入 {secret}。已保存的密钥绝不会随地址更改而发送到新地址；"[redacted]" 仅在地址不变时保留原值。',
  model_failed: '模型后端 "{backend}" 调用失败：{reason}',
  model_cancelled: '对模型后端 "{backend}" 的调用已取消。',
  conversation_not_found: '未找到会话 {conversationId}。',
  chat_no_pending_gate: '会话 {conversationId} 没有待处理的审批 "{gateId}"。',
  chat_busy: '会话 {conversationId} 正在回答上一条消息，请等待其完成。',
  memory_full: '记忆已满（{max} 条）；请先删除一些再添加。',
  memory_not_found: '未找到记忆 {id}。',
  memory_cursor_invalid: '该游标不是来自记忆列表上一页的游标；请从第一页重新开始。',
};

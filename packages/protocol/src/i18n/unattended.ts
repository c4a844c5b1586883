/**
 * Messages of the unattended-run check shared by schedules and webhook triggers, in both
 * languages. `{steps}` lists the steps that would wait for an approval.
 */
export const en: Record<string, string> = {
  schedule_needs_unattended_mode:
    'Nobody can answer an approval at the scheduled time: under the "ask" permission mode, step(s) {steps} would wait for approval. Choose "approve-for-me" or "full-access" deliberately for this schedule, or add an allow rule that covers those steps.',
  trigger_needs_unattended_mode:
    'Nobody can answer an approval when a webhook delivery runs: under the "ask" permission mode, step(s) {steps} would wait for approval. Choose "approve-for-me" or "full-access" deliberately for this trigger, or add an allow rule that covers those steps.',
  // problems (details[])
  unattended_step_gated: 'Step "{stepId}" ({tool}, {effect}) would ask for approval: {reason}',
  unattended_model_step_gated: 'Step "{stepId}" lets the model call "{tool}" ({effect}), which would ask for approval: {reason}',
  unattended_step_requires_approval: 'Step "{stepId}" is marked "requires approval".',
};

export const zhCN: Record<string, string> = {
  schedule_needs_unattended_mode:
    '计划执行时无人能够审批：在“ask（每次询问）”权限模式下，步骤 {steps} 会等待审批。请为此计划明确选择“approve-for-me（代我批准）”或“full-access（完全访问）”，或添加覆盖这些步骤的允许规则。',
  trigger_needs_unattended_mode:
    'Webhook 投递运行时无人能够审批：在“ask（每次询问）”权限模式下，步骤 {steps} 会等待审批。请为此触发器明确选择“approve-for-me（代我批准）”或“full-access（完全访问）”，或添加覆盖这些步骤的允许规则。',
  unattended_step_gated: '步骤 "{stepId}"（{tool}，{effect}）会请求审批：{reason}',
  unattended_model_step_gated: '步骤 "{stepId}" 允许模型调用 "{tool}"（{effect}），该调用会请求审批：{reason}',
  unattended_step_requires_approval: '步骤 "{stepId}" 被标记为“需要审批”。',
};

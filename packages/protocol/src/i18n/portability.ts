/** Messages of workflow export, import and diffs (error and problem codes), in both languages. */
export const en: Record<string, string> = {
  // errors
  import_invalid: 'The workflow document cannot be imported: {count} problem(s) found.',
  workflow_diff_side_invalid: '"{side}" must be a published version number or "draft", not "{value}".',
  mcp_workflow_failed: 'The workflow run {runId} ended {status}: {reason}',
  mcp_workflow_waiting: 'The workflow run {runId} is still going after {seconds} s (it may be waiting for a person): approve or answer it in the FengYu inbox ({inbox}), then look at the run ({run}).',
  // problems (details[])
  workflow_mcp_invalid: '{field} must be {reason}.',
  import_not_object: 'The document must be a JSON object exported by FengYu.',
  import_format_invalid: '"format" must be "{expected}".',
  import_format_unsupported: 'This document has format version {version}; this host reads version {supported} only.',
  import_field_missing: 'The document has no "{field}".',
  import_field_type: '"{field}" must be a JSON {type}.',
  // warnings of an import
  import_tool_missing: 'Tool "{name}" is not installed here: install or enable it before publishing.',
  import_secret_missing: 'Secret "{name}" does not exist here: add it in Settings → Secrets.',
};

export const zhCN: Record<string, string> = {
  import_invalid: '无法导入该工作流文件：发现 {count} 个问题。',
  workflow_diff_side_invalid: '“{side}”必须是已发布的版本号或 "draft"，而不是“{value}”。',
  mcp_workflow_failed: '工作流运行 {runId} 以 {status} 结束：{reason}',
  mcp_workflow_waiting: '工作流运行 {runId} 在 {seconds} 秒后仍未结束（可能在等待人工处理）：请在 FengYu 收件箱（{inbox}）中批准或作答，然后查看该运行（{run}）。',
  workflow_mcp_invalid: '{field} 必须是 {reason}。',
  import_not_object: '文件必须是 FengYu 导出的 JSON 对象。',
  import_format_invalid: '"format" 必须为 "{expected}"。',
  import_format_unsupported: '该文件的格式版本为 {version}；本主机只能读取版本 {supported}。',
  import_field_missing: '文件缺少 "{field}"。',
  import_field_type: '"{field}" 必须是 JSON {type}。',
  import_tool_missing: '此处未安装工具“{name}”：发布前请先安装或启用它。',
  import_secret_missing: '此处不存在密钥“{name}”：请在“设置 → 密钥”中添加。',
};

/** Messages of the permissions domain (error codes and problem codes), in both languages. */
export const en: Record<string, string> = {
  // problems (details[] of invalid_settings)
  invalid_rule: 'Rule "{text}" on line {line} is malformed: {reason}',
  invalid_hook: 'Hook "{name}" is invalid: {reason}',
  // errors
  invalid_plugin_hooks: 'The hooks file of plugin "{pluginId}" is invalid: {reason}',
  invalid_plugin_id: '"{pluginId}" is not a valid plugin id.',
  command_cwd_not_granted: 'The working directory {cwd} is not inside a directory this run was granted.',
  command_spawn_failed: 'The command could not be started: {reason}',
  command_isolation_unavailable:
    'Commands of owner "{owner}" must run in the bubblewrap sandbox, which is not available here ({reason}). The primary owner can allow unsandboxed commands for other owners in settings (commands.allowUnsandboxedOwners).',
};

export const zhCN: Record<string, string> = {
  invalid_rule: '第 {line} 行的规则 "{text}" 格式错误：{reason}',
  invalid_hook: '钩子 "{name}" 无效：{reason}',
  invalid_plugin_hooks: '插件 "{pluginId}" 的钩子文件无效：{reason}',
  invalid_plugin_id: '"{pluginId}" 不是有效的插件 ID。',
  command_cwd_not_granted: '工作目录 {cwd} 不在本次运行授权的任何目录之内。',
  command_spawn_failed: '无法启动命令：{reason}',
  command_isolation_unavailable: '所有者 "{owner}" 的命令必须在 bubblewrap 沙箱中运行，但此处不可用（{reason}）。主所有者可以在设置中允许其他所有者运行不受沙箱隔离的命令（commands.allowUnsandboxedOwners）。',
};

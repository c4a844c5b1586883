/** Messages of the MCP domain (configured MCP servers and their tools), in both languages. */
export const en: Record<string, string> = {
  mcp_server_unavailable: 'MCP server "{server}" is not available: {reason}',
  mcp_server_not_found: 'MCP server "{server}" is not configured. Add it under Settings → MCP servers.',
  mcp_server_name_reserved: 'MCP server name "{server}" would name its tools {tool}, inside the built-in tools\' reserved names ({family}); choose another server name.',
  mcp_isolation_unavailable:
    'MCP server "{server}" of owner "{owner}" must run in the bubblewrap sandbox, which is not available here ({reason}). The primary owner can allow unsandboxed commands and MCP servers for other owners in settings (commands.allowUnsandboxedOwners).',
};

export const zhCN: Record<string, string> = {
  mcp_server_unavailable: 'MCP 服务器 "{server}" 不可用：{reason}',
  mcp_server_not_found: '未配置 MCP 服务器 "{server}"。请在“设置 → MCP 服务器”中添加。',
  mcp_server_name_reserved: 'MCP 服务器名 "{server}" 会使其工具名为 {tool}，落入内置工具的保留名称（{family}）；请换一个服务器名。',
  mcp_isolation_unavailable: '所有者 "{owner}" 的 MCP 服务器 "{server}" 必须在 bubblewrap 沙箱中运行，但此处不可用（{reason}）。主所有者可以在设置中允许其他所有者运行不受沙箱隔离的命令和 MCP 服务器（commands.allowUnsandboxedOwners）。',
};

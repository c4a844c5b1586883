/** Messages of the browser tools (browser_*), in both languages. */
export const en: Record<string, string> = {
  browser_unavailable: 'The browser tools need Chromium, which was not found ({reason}). Install the Debian package "chromium" (apt-get install chromium) or set FENGYU_CHROMIUM to its path; nothing is downloaded.',
  browser_launch_failed: 'Chromium ({path}) could not be started: {reason}',
  browser_sessions_exhausted: 'Too many open browser sessions ({limit}). Close one with browser_close, or wait until a run finishes or a session has been idle for {idleSeconds} s.',
  browser_no_page: 'No page is open in this browser session: call browser_navigate first.',
  browser_unknown_ref: 'Element ref "{ref}" is not on the current page: take a new browser_snapshot and use one of its refs.',
  browser_action_failed: 'browser {action} failed: {reason}',
  browser_wait_timeout: 'Waited {timeoutMs} ms for {what}, without success.',
  browser_no_table: 'No table found on the page ({where}).',
  browser_bad_tab: 'There is no tab {index}; this session has {count} tab(s).',
  browser_navigation_denied: 'Navigation to {url} was refused: {reason}',
};

export const zhCN: Record<string, string> = {
  browser_unavailable: '浏览器工具需要 Chromium，但未找到（{reason}）。请安装 Debian 软件包 "chromium"（apt-get install chromium），或将 FENGYU_CHROMIUM 设为其路径；不会自动下载任何内容。',
  browser_launch_failed: '无法启动 Chromium（{path}）：{reason}',
  browser_sessions_exhausted: '打开的浏览器会话过多（{limit}）。请用 browser_close 关闭一个，或等待某个运行结束或会话空闲 {idleSeconds} 秒后自动关闭。',
  browser_no_page: '此浏览器会话中没有打开的页面：请先调用 browser_navigate。',
  browser_unknown_ref: '元素引用 "{ref}" 不在当前页面上：请重新调用 browser_snapshot 并使用其中的引用。',
  browser_action_failed: '浏览器操作 {action} 失败：{reason}',
  browser_wait_timeout: '等待 {what} 已达 {timeoutMs} 毫秒，仍未满足。',
  browser_no_table: '页面上未找到表格（{where}）。',
  browser_bad_tab: '不存在标签页 {index}；此会话共有 {count} 个标签页。',
  browser_navigation_denied: '已拒绝导航到 {url}：{reason}',
};

/** Strings of the schedules page (a placeholder until its issue lands; replace freely). */
export const en = { title: 'Scheduled tasks', body: 'Background schedules for published workflows are not built yet. Flows can be run by hand from the builder.' };

export const zhCN: typeof en = { title: '定时任务', body: '已发布工作流的后台定时调度尚未实现。流程可以在编辑器中手动运行。' };

/** @fengyu/plugin-sdk — write a FengYu plugin worker in TypeScript, and pack it as a `.fyp`. */
export { createWorker, type Handler, type LogLevel, type MethodContext, type MethodSpec, type PluginSecrets, type Progress, ToolError, Worker } from './worker';
export { localizedErrors, type MessageTable, messageTableProblems, renderMessage } from './messages';
export * from './wire';
export { z } from 'zod';

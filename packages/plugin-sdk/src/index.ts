/** @fengyu/plugin-sdk — write a FengYu plugin worker in TypeScript, and pack it as a `.fyp`. */
export { createWorker, type Handler, type LogLevel, type MethodContext, type MethodSpec, type Progress, ToolError, Worker } from './worker';
export * from './wire';
export { z } from 'zod';

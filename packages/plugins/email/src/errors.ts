import { localizedErrors, type ToolError } from '@fengyu/plugin-sdk';

/** Error codes of the e-mail worker (messages in both languages); thrown as ToolError {code, params, messageZh}. */

export const en = {
  email_account_not_found: 'There is no e-mail account "{accountId}". Accounts: {available}.',
  email_account_reserved: 'The account id "{accountId}" is built in and cannot be changed.',
  email_account_incomplete: 'Account "{accountId}" needs {field}.',
  email_tag_not_found: 'There is no recipient group "{tag}". Groups: {available}.',
  email_bad_recipient: '"{recipient}" is neither an e-mail address nor a recipient group.',
  email_no_recipients: 'Message {index} ({value}) has no recipients.',
  email_attachment_missing: 'The attachment "{path}" does not exist or is not a file (is it granted to this run?).',
  email_attachment_too_large: 'The attachment "{name}" is {bytes} bytes; at most {limit} bytes per file are sent.',
  email_secret_file_unreadable: 'The secret file "{path}" cannot be read, or its first line is empty or longer than 1000 characters.',
  email_unresolved_file_ref: 'Field "{field}" is a file reference object that the host did not resolve; pass a granted file path.',
  email_path_not_absolute: 'Field "{field}" must be an absolute path, got "{path}".',
  email_confirmation_not_found: 'There is no prepared batch with confirmation id "{confirmationId}".',
  email_confirm_in_progress: 'The batch "{confirmationId}" is being sent by another call right now.',
  email_no_parts: 'There is nothing to send: the batch has no parts.',
  email_cancelled: 'Sending was cancelled.',
} as const;

export type EmailErrorCode = keyof typeof en;

export const zhCN: Record<EmailErrorCode, string> = {
  email_account_not_found: '没有名为“{accountId}”的邮箱账户。现有账户：{available}。',
  email_account_reserved: '账户 id “{accountId}”是内置账户，不能修改。',
  email_account_incomplete: '账户“{accountId}”缺少 {field}。',
  email_tag_not_found: '没有名为“{tag}”的收件人分组。现有分组：{available}。',
  email_bad_recipient: '“{recipient}”既不是邮箱地址，也不是收件人分组。',
  email_no_recipients: '第 {index} 封邮件（{value}）没有收件人。',
  email_attachment_missing: '附件“{path}”不存在或不是文件（是否已授权给本次运行？）。',
  email_attachment_too_large: '附件“{name}”大小为 {bytes} 字节；每个文件最多发送 {limit} 字节。',
  email_secret_file_unreadable: '无法读取密钥文件“{path}”，或其第一行为空或超过 1000 个字符。',
  email_unresolved_file_ref: '字段“{field}”是宿主未解析的文件引用对象；请传入已授权的文件路径。',
  email_path_not_absolute: '字段“{field}”必须是绝对路径，收到的是“{path}”。',
  email_confirmation_not_found: '没有确认号为“{confirmationId}”的待发送批次。',
  email_confirm_in_progress: '批次“{confirmationId}”正在被另一个调用发送。',
  email_no_parts: '没有可发送的内容：该批次没有任何部分。',
  email_cancelled: '发送已取消。',
};

/** A failed call with a stable code. */
export const emailError: (code: EmailErrorCode, params?: Record<string, unknown>) => ToolError = localizedErrors(en, zhCN);

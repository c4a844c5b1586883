import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import nodemailer, { type SendMailOptions } from 'nodemailer';
import type { PublicAccount } from './accounts';

/**
 * One way to deliver a message per account kind: SMTP through nodemailer (a fresh connection per
 * message, so a dropped connection affects one message), or the local outbox, which renders the
 * message with nodemailer's stream transport and writes it as an `.eml` file.
 */

export interface OutgoingMessage {
  from: { name: string; address: string };
  to: string[];
  cc: string[];
  subject: string;
  text: string;
  messageId: string;
  headers: Record<string, string>;
  attachment: { name: string; path: string } | null;
}

export interface Delivery {
  /** Checks that the server answers and accepts the login (SMTP); no-op for the outbox. */
  verify(): Promise<void>;
  send(message: OutgoingMessage, fileStem: string): Promise<{ response: string }>;
  close(): void;
}

export interface SendFailure {
  /** True when the server or the connection is the problem (stop the batch), false for this message only. */
  connection: boolean;
  message: string;
}

const CONNECTION_CODES = new Set(['ECONNECTION', 'ETIMEDOUT', 'ESOCKET', 'EAUTH', 'EDNS', 'ECONNRESET', 'ECONNREFUSED', 'ETLS', 'EPROTOCOL', 'ENOAUTH']);

/** Sorts a nodemailer error; `secret` is removed from the text in case a server echoes it. */
export function classify(e: unknown, secret: string | undefined): SendFailure {
  const err = e as { code?: string; responseCode?: number; message?: string };
  let message = err.message ?? String(e);
  if (secret) message = message.split(secret).join('***');
  if (err.code === 'EAUTH') message = `the server refused the login: ${message}`;
  const connection = err.code ? CONNECTION_CODES.has(err.code) : err.responseCode === undefined || err.responseCode === 421;
  return { connection, message };
}

function mailOf(m: OutgoingMessage): SendMailOptions {
  return {
    from: m.from,
    to: m.to,
    ...(m.cc.length ? { cc: m.cc } : {}),
    subject: m.subject,
    text: m.text,
    messageId: m.messageId,
    headers: m.headers,
    attachments: m.attachment ? [{ filename: m.attachment.name, path: m.attachment.path }] : [],
  };
}

export function smtpDelivery(account: PublicAccount, secret: string | undefined): Delivery {
  const options = {
    host: account.host,
    port: account.port,
    secure: account.tls === 'tls',
    requireTLS: account.tls === 'starttls',
    ignoreTLS: account.tls === 'none',
    ...(account.user ? { auth: { user: account.user, pass: secret ?? '' } } : {}),
    tls: { rejectUnauthorized: !account.allowSelfSigned },
    connectionTimeout: 15_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
    logger: false,
    debug: false,
  };
  const transport = nodemailer.createTransport(options);
  return {
    verify: async () => {
      await transport.verify();
    },
    send: async (m) => {
      const info = await transport.sendMail(mailOf(m));
      return { response: String(info.response ?? '') };
    },
    close: () => transport.close(),
  };
}

/** Where the local outbox keeps the message `stem` (`<data>/outbox/<stem>.eml`). */
export function outboxFile(dir: string, stem: string): { name: string; path: string } {
  const name = `${stem}.eml`;
  return { name, path: join(dir, name) };
}

export function outboxDelivery(dir: string): Delivery {
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    verify: async () => {
      await mkdir(dir, { recursive: true });
    },
    send: async (m, stem) => {
      const info = await transport.sendMail(mailOf(m));
      const { path } = outboxFile(dir, stem);
      await writeFile(path, info.message as Buffer);
      return { response: `written to ${path}` };
    },
    close: () => transport.close(),
  };
}

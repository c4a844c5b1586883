import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, Level, Logger } from 'pino';

/**
 * A request's logger: the same lines as a child of the host's logger bound to the request id, but
 * the child is made only when the request logs at a level the logger writes. Most requests log
 * nothing at the host's default level (`warn`), and making a child per request was a measurable
 * share of a request's CPU. A call below the level is a no-op either way.
 */
const LEVELS: readonly Level[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'];

class LazyRequestLogger {
  private made?: Logger;

  constructor(
    private readonly parent: Logger,
    private readonly bound: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private ensure(): Logger {
    if (!this.made) this.made = this.parent.child(this.bound, this.options);
    return this.made;
  }

  get level(): string {
    return this.made ? this.made.level : this.parent.level;
  }

  set level(level: string) {
    this.ensure().level = level;
  }

  isLevelEnabled(level: string): boolean {
    return (this.made ?? this.parent).isLevelEnabled(level);
  }

  bindings(): Bindings {
    return this.made ? this.made.bindings() : { ...this.parent.bindings(), ...this.bound };
  }

  /** A logger derived from this request's (the request id binding included). */
  child(bindings: Bindings, options?: ChildLoggerOptions): Logger {
    return this.ensure().child(bindings, options);
  }

  /** Writes at `level` through the request's child, made now if this is its first line. */
  write(level: Level, args: unknown[]): void {
    if (!this.made && !this.parent.isLevelEnabled(level)) return;
    (this.ensure()[level] as (...a: unknown[]) => void)(...args);
  }
}

for (const level of LEVELS) {
  Object.defineProperty(LazyRequestLogger.prototype, level, {
    value(this: LazyRequestLogger, ...args: unknown[]) {
      this.write(level, args);
    },
  });
}
Object.defineProperty(LazyRequestLogger.prototype, 'silent', { value() {} });

/**
 * Fastify's `childLoggerFactory`: a lazy request logger. A route with a log level or serializers
 * of its own gets its child at once (the options change what the child writes).
 */
export function requestLoggerFactory(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  if (options.level !== undefined || options.serializers !== undefined) return logger.child(bindings, options);
  return new LazyRequestLogger(logger as Logger, bindings, options) as unknown as FastifyBaseLogger;
}

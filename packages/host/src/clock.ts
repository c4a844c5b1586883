/** The time source. Injected everywhere so pure cores and tests stay deterministic. */
export interface Clock {
  now(): number;
}

/** The wall clock, for the host as a user starts it. */
export const systemClock: Clock = { now: () => Date.now() };

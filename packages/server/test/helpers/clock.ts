import type { Clock } from '../../src/lib/clock.js';

/** A clock that stands still until a test moves it. */
export class FakeClock implements Clock {
  private current: number;

  constructor(start = '2026-11-22T12:00:00.000Z') {
    this.current = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.current);
  }

  advance(ms: number): void {
    this.current += ms;
  }

  set(iso: string): void {
    this.current = new Date(iso).getTime();
  }
}

import type { TestSpecification } from 'vitest/node';
import { describe, expect, it } from 'vitest';
import { planOrder } from './sequencer.js';

const file = (name: string, seconds: number, fillsMachine = false, size = 1) => ({ spec: { moduleId: name } as TestSpecification, seconds, fillsMachine, size });
const names = (files: ReturnType<typeof file>[]) => files.map((f) => f.spec.moduleId);

describe('the planned order of the test files', () => {
  it('starts a suite that fills the machine only once the one before it has ended, the other worker taking the rest meanwhile', () => {
    const lights = Array.from({ length: 10 }, (_, i) => file(`light${i}`, 20, false, 100 - i));
    const order = planOrder([...lights.slice(0, 4), file('crash', 50, true), ...lights.slice(4), file('multihost', 100, true)], 2);
    expect(names(order)).toEqual(['multihost', 'light0', 'light1', 'light2', 'light3', 'light4', 'crash', 'light5', 'light6', 'light7', 'light8', 'light9']);
  });

  it('puts the longest first among the rest, and the larger source first where the seconds are the same', () => {
    const order = planOrder([file('a', 4, false, 10), file('b', 30), file('c', 4, false, 50)], 2);
    expect(names(order)).toEqual(['b', 'c', 'a']);
  });

  it('ends with the suites that fill the machine when nothing else is left to run beside them', () => {
    const order = planOrder([file('x', 10, true), file('y', 20, true), file('z', 5)], 2);
    expect(names(order)).toEqual(['y', 'z', 'x']);
  });
});

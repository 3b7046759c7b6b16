import { describe, expect, it } from 'vitest';
import { JsonShapeBudget, MAX_ANSWER_DEPTH, maxAnswerValues } from '../../../src/api/answer-shape.js';

const limits = { maxListEntries: 1 };
const max = maxAnswerValues(limits);
const members = (n: number): string => `{${Array.from({ length: n }, (_, i) => `"k${i}":"a,b:[{"`).join(',')}}`;
const elements = (n: number): string => `[${Array.from({ length: n }, () => '[]').join(', ')}]`;
const codeOf = (f: () => void): string | undefined => {
  try {
    f();
    return undefined;
  } catch (err) {
    return (err as { code?: string }).code;
  }
};

describe('JsonShapeBudget', () => {
  it('counts members and elements, not what strings hold, up to the budget', () => {
    expect(codeOf(() => new JsonShapeBudget('x', limits).check(members(max), '(body)'))).toBeUndefined();
    expect(codeOf(() => new JsonShapeBudget('x', limits).check(members(max + 1), '(body)'))).toBe('GRID_LIMIT_EXCEEDED');
    expect(codeOf(() => new JsonShapeBudget('x', limits).check(elements(max), '(body)'))).toBeUndefined();
    expect(codeOf(() => new JsonShapeBudget('x', limits).check(elements(max + 1), '(body)'))).toBe('GRID_LIMIT_EXCEEDED');
  });

  it('holds one budget across the texts of one answer (the kept records of a list)', () => {
    const budget = new JsonShapeBudget('x', limits);
    budget.check(members(max - 1), 'data[0]');
    expect(codeOf(() => budget.check('{"a":1,"b":2}', 'data[1]'))).toBe('GRID_LIMIT_EXCEEDED');
  });

  it(`refuses nesting past ${MAX_ANSWER_DEPTH} levels`, () => {
    const nest = (n: number): string => '{"a":'.repeat(n - 1) + '[]' + '}'.repeat(n - 1);
    expect(codeOf(() => new JsonShapeBudget('x', limits).check(nest(MAX_ANSWER_DEPTH), '(body)'))).toBeUndefined();
    expect(codeOf(() => new JsonShapeBudget('x', limits).check(nest(MAX_ANSWER_DEPTH + 1), '(body)'))).toBe('GRID_RESPONSE_ERROR');
    expect(
      codeOf(() => new JsonShapeBudget('x', limits).check(`["\\"[[[[", ${Array(100).fill('"[{"').join(',')}]`, '(body)')),
    ).toBeUndefined();
  });
});

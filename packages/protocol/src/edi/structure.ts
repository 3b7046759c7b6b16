/**
 * What an envelope reader reports: interchanges, their functional groups and transaction sets
 * (messages), and the problems found on each, at two levels — `envelope` (the interchange itself
 * is incomplete or inconsistent) and `counts` (a trailer declares a wrong count or reference).
 */
import type { Separators, Syntax } from './tokenizer.js';

export type ProblemLevel = 'envelope' | 'counts';

export type ProblemCode =
  | 'NOT_EDI'
  | 'BAD_HEADER'
  | 'SEGMENT_TOO_LONG'
  | 'OUTSIDE_INTERCHANGE'
  | 'HEADER_INSIDE_INTERCHANGE'
  | 'MISSING_CONTROL'
  | 'MISSING_PARTY'
  | 'CONTROL_MISMATCH'
  | 'NOT_CLOSED'
  | 'EMPTY'
  | 'INTERCHANGE_COUNT_MISMATCH'
  | 'GROUP_TRAILER_MISSING'
  | 'GROUP_CONTROL_MISMATCH'
  | 'GROUP_COUNT_MISMATCH'
  | 'SET_OUTSIDE_GROUP'
  | 'SET_TRAILER_MISSING'
  | 'SET_CONTROL_MISMATCH'
  | 'SET_COUNT_MISMATCH'
  | 'TRAILER_WITHOUT_HEADER';

export interface Problem {
  readonly level: ProblemLevel;
  readonly code: ProblemCode;
  /** 1-based interchange index in the stream; 0 when the problem is outside any interchange. */
  readonly interchange: number;
  /** 1-based index of the segment the problem was found at, in the whole stream. */
  readonly segment: number;
  readonly tag: string;
  readonly message: string;
}

export interface Party {
  readonly qualifier: string;
  readonly id: string;
  /** The element as sent (X12: qualifier and id are two elements; EDIFACT: the S002/S003 composite). */
  readonly raw: string;
}

export interface TransactionSet {
  /** ST01 / message type (UNH S009 first component). */
  readonly id: string;
  /** ST02 / UNH 0062. */
  readonly control: string;
  /** The UNH S009 composite as sent (EDIFACT), '' for X12. */
  readonly identifier: string;
  /** Segments read from ST/UNH to SE/UNT inclusive. */
  segments: number;
  complete: boolean;
  readonly problems: Problem[];
}

export interface FunctionalGroup {
  /** GS01 / UNG 0038; '' for the implicit group of EDIFACT messages sent without UNG. */
  readonly functionalId: string;
  /** GS06 / UNG 0048. */
  readonly control: string;
  /** GS08 / UNG S008 as sent. */
  readonly version: string;
  /** GS02 / UNG S006 (application sender). */
  readonly sender: string;
  /** GS03 / UNG S007 (application receiver). */
  readonly receiver: string;
  /** False for EDIFACT messages that sit directly in the interchange (no UNG). */
  readonly explicit: boolean;
  readonly sets: TransactionSet[];
  setCount: number;
  /** The number of sets GE01 / UNE 0060 declares (NaN when not a number, undefined without trailer). */
  declaredSets: number | undefined;
  complete: boolean;
  readonly problems: Problem[];
}

export interface Interchange {
  /** 1-based position in the stream. */
  readonly index: number;
  readonly standard: Syntax;
  readonly separators: Separators;
  /** X12: the 106-character ISA with its terminator; EDIFACT: the UNB without terminator. */
  readonly header: string;
  /** ISA13 / UNB 0020 (trimmed). */
  readonly control: string;
  readonly sender: Party;
  readonly receiver: Party;
  /** ISA15 (`P`/`T`/…) or UNB 0035 (`1` = test, '' = not given). */
  readonly testIndicator: string;
  /** ISA12 (`00401`, `00501`…) or the UNB syntax version (`3`, `4`…). */
  readonly version: string;
  /** EDIFACT syntax identifier (`UNOC`…); ISA11 for X12. */
  readonly syntaxId: string;
  /** Groups in order (detail mode only; empty in summary mode). */
  readonly groups: FunctionalGroup[];
  /** Explicit groups read (GS, UNG). */
  groupCount: number;
  /** Sets / messages read (ST, UNH). */
  setCount: number;
  /** Closed by its IEA/UNZ. */
  complete: boolean;
  readonly problems: Problem[];
}

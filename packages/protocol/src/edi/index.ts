export {
  Tokenizer,
  EDIFACT_DEFAULTS,
  ISA_LENGTH,
  type Segment,
  type Separators,
  type Syntax,
  type TokenizerFailure,
  type TokenizerSink,
} from './tokenizer.js';
export { EnvelopeReader } from './envelope.js';
export { splitElements } from './elements.js';
export type { FunctionalGroup, Interchange, Party, Problem, ProblemCode, ProblemLevel, TransactionSet } from './structure.js';
export { EnvelopeCheck, checkEnvelope, checkEnvelopeStream, describeProblem, type CheckOptions, type EnvelopeVerdict } from './check.js';

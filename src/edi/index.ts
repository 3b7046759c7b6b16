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
export {
  EnvelopeReader,
  splitElements,
  type FunctionalGroup,
  type Interchange,
  type Party,
  type Problem,
  type ProblemCode,
  type ProblemLevel,
  type TransactionSet,
} from './envelope.js';
export { EnvelopeCheck, checkEnvelope, checkEnvelopeStream, describeProblem, type CheckOptions, type EnvelopeVerdict } from './check.js';

/**
 * The config file's YAML text to plain values. A file mode is read as its digits were written:
 * YAML takes `fileMode: 0640` for the decimal number 640, which as a mode is 0o1200 — a file its
 * readers cannot open, written without a word.
 */
import YAML from 'yaml';

/** Keys whose value is an octal file mode. */
const MODE_KEYS = new Set(['fileMode']);

/** Parses `text`; throws the YAML library's error (with its line and column) on a syntax error. */
export function parseConfigYaml(text: string): unknown {
  const doc = YAML.parseDocument(text);
  const [error] = doc.errors;
  if (error) throw error;
  YAML.visit(doc, {
    Pair(_, pair) {
      const { key, value } = pair;
      // 0o640 and 0x1a0 say their base; a number written in decimal digits is handed on as those digits.
      if (
        YAML.isScalar(key) &&
        MODE_KEYS.has(String(key.value)) &&
        YAML.isScalar(value) &&
        typeof value.value === 'number' &&
        !value.format
      )
        value.value = value.source;
    },
  });
  return doc.toJS();
}

// The module hooks behind module-loads.mjs (they run on Node's hooks thread).
import fs from 'node:fs';

let file = '';

export function initialize(data) {
  file = data;
}

export async function load(url, context, nextLoad) {
  if (file) fs.appendFileSync(file, `${url}\n`);
  return nextLoad(url, context);
}

// Valid and broken X12 / EDIFACT interchanges for tests, from our grid ID (ZZ/GRIDSYNC) to the demo partner.
const pad = (s: string, n: number): string => s.padEnd(n, ' ').slice(0, n);

export function x12(control: number, body = 'N1*ST*TEST'): string {
  const c9 = String(control).padStart(9, '0');
  return `ISA*00*${pad('', 10)}*00*${pad('', 10)}*ZZ*${pad('GRIDSYNC', 15)}*ZZ*${pad('DEMOPARTNER', 15)}*261122*1200*U*00401*${c9}*0*P*>~GS*IN*GRIDSYNC*DEMOPARTNER*20261122*1200*${control}*X*004010~ST*810*0001~${body}~SE*3*0001~GE*1*${control}~IEA*1*${c9}~`;
}

export function edifact(control: number): string {
  return `UNA:+.? 'UNB+UNOC:3+GRIDSYNC:ZZ+DEMOPARTNER:ZZ+261122:1200+${control}'UNH+1+ORDERS:D:96A:UN'BGM+220+${control}'UNT+3+1'UNZ+1+${control}'`;
}

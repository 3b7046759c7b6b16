export function selfSignedCert(dir: string): { key: Buffer; cert: Buffer } | undefined;

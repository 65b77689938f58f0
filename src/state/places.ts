// Where kata-install keeps what it knows of its own install under the prefix: read by detection
// (the probe cache, the installed version) and written by the transaction.

/** The directory of kata-install's journal, probe cache and saved copies under the prefix. */
export const JOURNAL_DIR = ".install";

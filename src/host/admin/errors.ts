// The typed failure of an operator command, carried over the admin channel by code and shown by the CLI
// as one line with its exit code. Dependency-free so the CLI entry point can import it eagerly.
export class OperationError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'OperationError';
  }
}

"""The package's exceptions: every failure of the C libraries arrives as one of these, carrying the
C layer's message (the compiler's "<file>:<line>:<col>: ...", the runtime's tpurt_last_error)."""


class Error(Exception):
    """Anything tpusim refuses or that fails in it."""


class ArgumentError(Error, ValueError):
    """A bad argument to the package's own API (a size, a core count, an argument number)."""


class LibraryError(Error, OSError):
    """libtpusim.so cannot be found or does not match the package's declarations."""


class CompileError(Error):
    """tpuc_compile refused the model. file, line and col locate the instruction (line 0 when the
    message concerns no instruction); text is the model's text, so text.splitlines()[line - 1] is
    the line the message points at."""

    def __init__(self, message, file, line, col, text=None):
        super().__init__(message)
        self.file, self.line, self.col, self.text = file, line, col, text


class RunError(Error):
    """The runtime failed: status is its tpurt_status name ("TPURT_E_EVAL"), the message its
    tpurt_last_error (or tpurt_open's), naming the batch, segment and operation."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


class DeviceError(RunError):
    """The simulated device: no model of that size built, its firmware rejected a command, a core
    stopped with an error, or a submission ran out of its cycle budget."""


class MismatchError(RunError):
    """The device's result differs from the golden model's (verification is on by default)."""

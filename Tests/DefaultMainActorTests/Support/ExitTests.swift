import Testing

/// What an exit test's child process wrote to standard error, as text.
func standardError(of result: ExitTest.Result?) -> String {
    String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
}

/// Carries a value to another thread on purpose, as a misuse would: a key path to a
/// main-actor registration, to check that resolving it there stops.
nonisolated struct Carried<Value>: @unchecked Sendable {
    // @unchecked: the point of the type; only tests of that misuse use it.
    let value: Value
}

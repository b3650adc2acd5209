import Testing

/// What an exit test's process wrote to standard error, as text.
func standardError(of result: ExitTest.Result?) -> String {
    String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
}

import Foundation
import Testing

/// What an exit test's child process wrote to standard error, as text.
func standardError(of result: ExitTest.Result?) -> String {
    String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
}

/// Records, as an issue, why an exit test's child process stopped: the message of its
/// `Fatal error:` line, or else what it wrote to standard error, or that it wrote nothing.
/// For the second run of an exit test that did not exit as it should, observing its output.
///
/// ```swift
/// if await #expect(processExitsWith: .success) { Self.scenario() } == nil {
///     recordStop(of: await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
///         Self.scenario()
///     })
/// }
/// ```
func recordStop(of result: ExitTest.Result?) {
    let output = standardError(of: result)
    if let start = output.range(of: "Fatal error: ") {
        Issue.record("stopped with: \(output[start.upperBound...].prefix { $0 != "\n" })")
    } else if !output.isEmpty {
        Issue.record("standard error: \(output.prefix(900))")
    } else {
        Issue.record("no standard error")
    }
}

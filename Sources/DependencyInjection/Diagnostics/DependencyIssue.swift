#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A problem found while resolving a dependency that does not stop the program.
///
/// The library reports an issue, for instance, when a placeholder registration made with
/// ``DependencyContainer/unimplemented(_:property:placeholder:fileID:filePath:line:column:isolation:)->Provider<Value>``
/// is resolved: the app goes on with the placeholder, and someone should hear about it.
/// Every issue goes to ``reporter``, which writes it to standard error unless something
/// else was installed. The `DependencyInjectionTesting` product installs a reporter that
/// turns each issue into a failure of the test that caused it, so this module never links
/// a test framework itself.
///
/// ```swift
/// DependencyIssue.reporter = { issue in
///     logger.error("\(issue.message) at \(issue.fileID):\(issue.line)")
/// }
/// ```
public struct DependencyIssue: Sendable, CustomStringConvertible {
    /// The name of the dependency the issue is about, such as `analytics`.
    public let dependency: String

    /// What went wrong and how to fix it, in one sentence.
    public let message: String

    /// The file that declares the registration, as `Module/File.swift`.
    public let fileID: StaticString

    /// The full path of the file that declares the registration, as test frameworks
    /// expect it (`XCTFail(_:file:line:)`, for instance).
    public let filePath: StaticString

    /// The line of the registration.
    public let line: UInt

    /// The column of the registration.
    public let column: UInt

    /// The container whose resolution raised the issue; `nil` when unknown.
    ///
    /// A reporter runs on whatever thread or task resolved the dependency, which is not
    /// always one that knows what the resolution was for: a dispatch queue or a detached
    /// task that was handed a container knows nothing else. The container says whose
    /// issue it is. The `DependencyInjectionTesting` product, for instance, follows it
    /// (and its ``DependencyContainer/parent``s) to the test that owns the container, and
    /// fails that test. A reporter can route issues the same way:
    ///
    /// ```swift
    /// let previous = DependencyIssue.reporter
    /// DependencyIssue.reporter = { issue in
    ///     if issue.container === DependencyContainer.preview { return }   // expected there
    ///     previous(issue)
    /// }
    /// ```
    public let container: DependencyContainer?

    /// The ``message``, so that `print(issue)` and string interpolation show it.
    public var description: String { message }
}

extension DependencyIssue {
    /// A function that receives every ``DependencyIssue``.
    ///
    /// It may be called from any thread, while the dependency is being resolved, so it
    /// must be quick and must not resolve dependencies itself.
    public typealias Reporter = @Sendable (DependencyIssue) -> Void

    private static let installedReporter = _Locked(standardError)

    /// Where issues go: to ``standardError`` until something else is installed.
    ///
    /// Replace it to route issues to a logger or a crash reporter, and keep the previous
    /// value to chain to it. Reading and writing it is safe from any thread. The
    /// `DependencyInjectionTesting` product installs a reporter that records each issue
    /// as a failure of the running test and hands other issues to the one it replaced:
    ///
    /// ```swift
    /// let previous = DependencyIssue.reporter
    /// DependencyIssue.reporter = { issue in
    ///     analytics.track("dependency-issue", issue.dependency)
    ///     previous(issue)
    /// }
    /// ```
    public static var reporter: Reporter {
        get { installedReporter.withLock { $0 } }
        set { installedReporter.replace(with: newValue) }
    }

    /// The default ``reporter``: writes the issue and where its registration is declared
    /// to standard error, one line per issue.
    ///
    /// The line reads `DependencyInjection: <message> (<fileID>:<line>)`. Reinstall it to
    /// undo a custom reporter, or call it from one to keep the default output:
    ///
    /// ```swift
    /// DependencyIssue.reporter = DependencyIssue.standardError
    /// ```
    public static let standardError: Reporter = { issue in
        let line = "DependencyInjection: \(issue.message) (\(issue.fileID):\(issue.line))\n"
        _ = write(STDERR_FILENO, line, line.utf8.count)
    }

    /// Hands the issue to the installed ``reporter``.
    func report() {
        DependencyIssue.reporter(self)
    }
}

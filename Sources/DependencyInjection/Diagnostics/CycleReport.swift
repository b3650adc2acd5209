/// Stops the process with a message naming a construction cycle.
///
/// One format for every cycle the package finds, on one owner or across several, through
/// providers or `@Dependency` properties: each registration once, with the place in the
/// user's code that declares it, and the first again at the end:
///
/// ```text
/// Circular dependency: authService (App/Services.swift:12) -> sessionStore (App/Services.swift:15) -> authService
/// ```
///
/// It stops in release builds too: a cycle would otherwise overflow the stack or hang.
enum CycleReport {
    static func stop(_ chain: [Site], closing: Site) -> Never {
        let first = chain.first ?? closing
        fatalError("Circular dependency: " + (chain.map(\.description) + [closing.nameText]).joined(separator: " -> "),
            file: first.fileID, line: first.line)
    }
}

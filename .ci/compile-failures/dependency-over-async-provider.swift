// expected-error: try await
// Must NOT compile: `@Dependency` over an async registration. Reading a property cannot
// await, so an `AsyncProvider` is resolved with `try await container.database()`.
// `.ci/run` type-checks this file and expects an error that says so.
import DependencyInjection

final class Database: Sendable {
    static func open() async throws -> Database { Database() }
}

extension DependencyContainer {
    var database: AsyncProvider<Database> { singleton { try await Database.open() } }
}

final class Repository {
    @Dependency(\.database) var database
}

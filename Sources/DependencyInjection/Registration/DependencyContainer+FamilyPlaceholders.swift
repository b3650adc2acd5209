extension DependencyContainer {
    /// A placeholder for a dependency with an argument that another module supplies: a
    /// provider family that stops the program with a message when it is resolved, for any
    /// argument, before that module overrides it.
    ///
    /// The family counterpart of
    /// ``unimplemented(_:property:fileID:line:column:isolation:)->Provider<Value>``, for a
    /// dependency that exists once per user, per document or per account, and that a
    /// feature module uses but the app implements. The app supplies every argument at once
    /// with one closure that receives the argument; a test may supply a single argument:
    ///
    /// ```swift
    /// struct AccountID: Hashable, Sendable { let raw: String }
    /// protocol Ledger: Sendable { var account: AccountID { get } }
    /// struct BankLedger: Ledger { let account: AccountID }
    ///
    /// // In the feature module:
    /// extension DependencyContainer {
    ///     var ledger: ProviderFamily<AccountID, any Ledger> { unimplemented() }
    /// }
    ///
    /// // In the app, at start-up:
    /// func supplyLedgers() {
    ///     DependencyContainer.default.override(\.ledger) { account in BankLedger(account: account) }
    /// }
    /// ```
    ///
    /// A placeholder in a subscript, `subscript(id:) -> Provider<…> { unimplemented() }`, is
    /// one registration for every argument, which one override replaces for all of them:
    /// declare a family instead.
    ///
    /// Resolving an argument with no override of the family, or of that argument, in the
    /// container or its parents stops with `ledger is not implemented in this module:
    /// supply it with container.override(\.ledger) { argument in … }`, pointing at the
    /// registration. An override keeps the placeholder's scope: each argument's instance is
    /// built once per container.
    ///
    /// - Parameters:
    ///   - name: The dependency's name in the message; the property's name by default.
    ///   - property: The property that declares the placeholder, whose key path the
    ///     message writes; leave the default, or forward it from a helper.
    ///   - fileID: Part of the registration's identity and where the message points;
    ///     leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    ///   - isolation: The registration's actor; a main-actor registration is checked to
    ///     resolve on the main actor. Leave the default, or forward it from a helper.
    /// - Returns: A provider family of the property's declared argument and value types
    ///   that must be overridden.
    @inlinable  // specialized where it is declared, and its closure captures nothing
    public func unimplemented<Argument: Hashable & Sendable, Value: Sendable>(
        _ name: StaticString = #function, property: StaticString = #function, fileID: StaticString = #fileID,
        line: UInt = #line, column: UInt = #column, isolation: (any Actor)? = #isolation
    ) -> ProviderFamily<Argument, Value> {
        guard UnimplementedMessage.isPropertyName(name, of: property) else {
            return ProviderFamily(self, .singleton, name, fileID, line, column, isolation) { _ in
                UnimplementedMessage.stopInConstruction(property: property)
            }
        }
        return ProviderFamily(self, .singleton, name, fileID, line, column, isolation) { _ in
            UnimplementedMessage.stopInConstruction()
        }
    }

    /// A placeholder for a dependency with an argument that another module supplies: a
    /// provider family that reports a ``DependencyIssue`` and returns `placeholder`'s value
    /// for an argument resolved before that module overrides it.
    ///
    /// The family counterpart of
    /// ``unimplemented(_:property:placeholder:fileID:filePath:line:column:isolation:)->Provider<Value>``,
    /// for a harmless stand-in built from the argument:
    ///
    /// ```swift
    /// struct AccountID: Hashable, Sendable { let raw: String }
    /// protocol Ledger: Sendable { var account: AccountID { get } }
    /// struct EmptyLedger: Ledger { let account: AccountID }
    ///
    /// extension DependencyContainer {
    ///     var ledger: ProviderFamily<AccountID, any Ledger> {
    ///         unimplemented(placeholder: { account in EmptyLedger(account: account) })
    ///     }
    /// }
    /// ```
    ///
    /// Each argument's placeholder is built once per container, as a singleton family's
    /// instance is, so each container reports it once per argument.
    ///
    /// - Parameters:
    ///   - name: The dependency's name in the message; the property's name by default.
    ///   - property: The property that declares the placeholder, whose key path the
    ///     message writes; leave the default, or forward it from a helper.
    ///   - placeholder: Builds the value to use for an argument until the dependency is
    ///     supplied.
    ///   - fileID: Part of the registration's identity; leave the default.
    ///   - filePath: Where the issue points; leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    ///   - isolation: The registration's actor; a main-actor registration is checked to
    ///     resolve on the main actor. Leave the default, or forward it from a helper.
    /// - Returns: A provider family of the property's declared argument and value types
    ///   that should be overridden.
    public func unimplemented<Argument: Hashable & Sendable, Value: Sendable>(
        _ name: StaticString = #function, property: StaticString = #function, placeholder: @escaping (Argument) -> Value,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column,
        isolation: (any Actor)? = #isolation
    ) -> ProviderFamily<Argument, Value> {
        ProviderFamily(self, .singleton, name, fileID, line, column, isolation) { argument in
            self.reportPlaceholder(name, property: property, isFamily: true, fileID: fileID, filePath: filePath, line: line, column: column)
            return placeholder(argument)
        }
    }
}

extension DependencyContainer {
    /// A placeholder for a dependency with an argument that lives on the main actor and
    /// that another module supplies: a provider family that stops the program with a
    /// message when it is resolved before that module overrides it.
    ///
    /// The family counterpart of ``unimplemented(_:property:on:fileID:line:column:)->Provider<Value>``,
    /// for a value that is not `Sendable`, such as a plain protocol in an app module with
    /// main-actor default isolation. Supply it with a main-actor override:
    ///
    /// ```swift
    /// protocol Composer { var draftID: Int { get } }
    /// final class MailComposer: Composer {
    ///     let draftID: Int
    ///     init(draftID: Int) { self.draftID = draftID }
    /// }
    ///
    /// extension DependencyContainer {
    ///     @MainActor var composer: ProviderFamily<Int, any Composer> { unimplemented(on: MainActor.self) }
    /// }
    ///
    /// @MainActor func startMail() {
    ///     DependencyContainer.default.override(\.composer) { @MainActor draft in MailComposer(draftID: draft) }
    /// }
    /// ```
    ///
    /// It is resolved on the main actor only, and each argument's override is built once
    /// per container.
    ///
    /// - Parameters:
    ///   - name: The dependency's name in the message; the property's name by default.
    ///   - property: The property that declares the placeholder, whose key path the
    ///     message writes; leave the default, or forward it from a helper.
    ///   - actor: `MainActor.self`: the value lives on the main actor.
    ///   - fileID: Part of the registration's identity and where the message points;
    ///     leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    /// - Returns: A provider family of the property's declared argument and value types
    ///   that must be overridden.
    @MainActor @inlinable
    public func unimplemented<Argument: Hashable & Sendable, Value>(
        _ name: StaticString = #function, property: StaticString = #function, on actor: MainActor.Type,
        fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column
    ) -> ProviderFamily<Argument, Value> {
        guard UnimplementedMessage.isPropertyName(name, of: property) else {
            return ProviderFamily(self, .singleton, name, fileID, line, column, MainActor.shared, { _ in
                UnimplementedMessage.stopInConstruction(property: property)
            })
        }
        return ProviderFamily(self, .singleton, name, fileID, line, column, MainActor.shared, { _ in
            UnimplementedMessage.stopInConstruction()
        })
    }

    /// A placeholder for a dependency with an argument that lives on the main actor and
    /// that another module supplies: a provider family that reports a
    /// ``DependencyIssue`` and returns `placeholder`'s value, built on the main actor, for
    /// an argument resolved before that module overrides it.
    ///
    /// ```swift
    /// protocol Composer { var draftID: Int { get } }
    /// final class ReadOnlyComposer: Composer {
    ///     let draftID: Int
    ///     init(draftID: Int) { self.draftID = draftID }
    /// }
    ///
    /// extension DependencyContainer {
    ///     @MainActor var composer: ProviderFamily<Int, any Composer> {
    ///         unimplemented(on: MainActor.self, placeholder: { @MainActor draft in ReadOnlyComposer(draftID: draft) })
    ///     }
    /// }
    /// ```
    ///
    /// It is resolved on the main actor only, and reports once per container and argument.
    ///
    /// - Parameters:
    ///   - name: The dependency's name in the message; the property's name by default.
    ///   - property: The property that declares the placeholder, whose key path the
    ///     message writes; leave the default, or forward it from a helper.
    ///   - actor: `MainActor.self`: the value lives on the main actor.
    ///   - placeholder: Builds the value to use for an argument until the dependency is
    ///     supplied, on the main actor.
    ///   - fileID: Part of the registration's identity; leave the default.
    ///   - filePath: Where the issue points; leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    /// - Returns: A provider family of the property's declared argument and value types
    ///   that should be overridden.
    @MainActor
    public func unimplemented<Argument: Hashable & Sendable, Value>(
        _ name: StaticString = #function, property: StaticString = #function, on actor: MainActor.Type,
        placeholder: @escaping @MainActor (Argument) -> Value,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) -> ProviderFamily<Argument, Value> {
        ProviderFamily(self, .singleton, name, fileID, line, column, MainActor.shared, { argument in
            self.reportPlaceholder(name, property: property, isFamily: true, fileID: fileID, filePath: filePath, line: line, column: column)
            return placeholder(argument)
        })
    }
}

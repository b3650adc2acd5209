extension DependencyContainer {
    /// A provider that builds a new instance on every resolution.
    ///
    /// Use it for objects with their own state per use site, such as view models or
    /// requests:
    ///
    /// ```swift
    /// var feedLoader: Provider<any FeedLoader> {
    ///     factory { RemoteFeedLoader(url: self.baseURL, client: self.httpClient()) }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - name: The registration's name in messages; the property's name by default.
    ///   - fileID: Part of the registration's identity; leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    ///   - isolation: The registration's actor; a main-actor registration is checked to
    ///     resolve on the main actor. Leave the default, or forward it from a helper.
    ///   - make: Builds an instance. It runs without any container lock held and may
    ///     resolve other dependencies through `self`.
    /// - Returns: A provider of the property's declared type.
    @inlinable
    public func factory<Value>(
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        isolation: (any Actor)? = #isolation,
        _ make: @escaping () -> Value
    ) -> Provider<Value> {
        Provider(self, .factory, nil, name, fileID, line, column, isolation, make)
    }

    /// A provider that builds a new instance on every resolution, identified by an
    /// argument.
    ///
    /// Declare it in a subscript: each argument is its own registration, so an override
    /// of one argument does not reach the others, and a factory that resolves itself with
    /// another argument is recursion, not a cycle:
    ///
    /// ```swift
    /// subscript(countdown n: Int) -> Provider<[Int]> {
    ///     factory(n) { n == 0 ? [0] : [n] + self[countdown: n - 1]() }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - argument: The value that identifies the registration.
    ///   - name: The registration's name in messages; the subscript's name by default.
    ///   - fileID: Part of the registration's identity; leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    ///   - isolation: The registration's actor; a main-actor registration is checked to
    ///     resolve on the main actor. Leave the default, or forward it from a helper.
    ///   - make: Builds an instance for `argument`.
    /// - Returns: A provider of the subscript's declared type.
    @inlinable
    public func factory<Value, Argument: Hashable & Sendable>(
        _ argument: Argument,
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        isolation: (any Actor)? = #isolation,
        _ make: @escaping () -> Value
    ) -> Provider<Value> {
        Provider(self, .factory, RegistrationKey.TypedArgument(argument), name, fileID, line, column, isolation, make)
    }

    /// A provider whose instance is built once per container and then reused.
    ///
    /// Many threads may ask at once: the instance is still built exactly once, and the
    /// others wait for it. It lives until ``reset()`` or an override of it or of
    /// something it was built from. A child container builds its own.
    ///
    /// ```swift
    /// var httpClient: Provider<any HTTPClient> { singleton { URLSessionHTTPClient() } }
    /// ```
    ///
    /// - Parameters:
    ///   - name: The registration's name in messages; the property's name by default.
    ///   - fileID: Part of the registration's identity; leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    ///   - isolation: The registration's actor; a main-actor registration is checked to
    ///     resolve on the main actor. Leave the default, or forward it from a helper.
    ///   - make: Builds the instance. It runs without any container lock held.
    /// - Returns: A provider of the property's declared type.
    @inlinable
    public func singleton<Value: Sendable>(
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        isolation: (any Actor)? = #isolation,
        _ make: @escaping () -> Value
    ) -> Provider<Value> {
        Provider(self, .singleton, nil, name, fileID, line, column, isolation, make)
    }

    /// A provider of one instance per distinct argument, kept like a singleton.
    ///
    /// Declare it in a subscript so each argument gets its own instance:
    ///
    /// ```swift
    /// subscript(session id: User.ID) -> Provider<UserSession> {
    ///     singleton(id) { UserSession(id: id) }
    /// }
    /// let session = DependencyContainer.main[session: "42"]()
    /// ```
    ///
    /// Arguments are told apart by their full `Hashable` equality, so two arguments
    /// whose hash values collide still get two instances.
    ///
    /// - Parameters:
    ///   - argument: The value that identifies the instance.
    ///   - name: The registration's name in messages; the subscript's name by default.
    ///   - fileID: Part of the registration's identity; leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    ///   - isolation: The registration's actor; a main-actor registration is checked to
    ///     resolve on the main actor. Leave the default, or forward it from a helper.
    ///   - make: Builds the instance for `argument`.
    /// - Returns: A provider of the subscript's declared type.
    @inlinable
    public func singleton<Value: Sendable, Argument: Hashable & Sendable>(
        _ argument: Argument,
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        isolation: (any Actor)? = #isolation,
        _ make: @escaping () -> Value
    ) -> Provider<Value> {
        Provider(self, .singleton, RegistrationKey.TypedArgument(argument), name, fileID, line, column, isolation, make)
    }

    /// A provider whose instance is reused while something else holds it.
    ///
    /// The container keeps only a weak reference, so the instance goes away with its
    /// last user and the next resolution builds a fresh one. Use it for caches and other
    /// expensive objects that should not outlive the screens that use them:
    ///
    /// ```swift
    /// var imageCache: Provider<ImageCache> { shared { ImageCache() } }
    /// ```
    ///
    /// > Important: Only class instances can be held weakly. A value type resolved
    /// > through `shared` is built anew each time, as with
    /// > ``factory(name:fileID:line:column:isolation:_:)->Provider<Value>``.
    ///
    /// - Parameters:
    ///   - name: The registration's name in messages; the property's name by default.
    ///   - fileID: Part of the registration's identity; leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    ///   - isolation: The registration's actor; a main-actor registration is checked to
    ///     resolve on the main actor. Leave the default, or forward it from a helper.
    ///   - make: Builds the instance.
    /// - Returns: A provider of the property's declared type.
    @inlinable
    public func shared<Value: Sendable>(
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        isolation: (any Actor)? = #isolation,
        _ make: @escaping () -> Value
    ) -> Provider<Value> {
        Provider(self, .shared, nil, name, fileID, line, column, isolation, make)
    }

    /// A provider of one weakly held instance per distinct argument.
    ///
    /// ```swift
    /// subscript(thumbnails size: Int) -> Provider<ThumbnailCache> {
    ///     shared(size) { ThumbnailCache(size: size) }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - argument: The value that identifies the instance.
    ///   - name: The registration's name in messages; the subscript's name by default.
    ///   - fileID: Part of the registration's identity; leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    ///   - isolation: The registration's actor; a main-actor registration is checked to
    ///     resolve on the main actor. Leave the default, or forward it from a helper.
    ///   - make: Builds the instance for `argument`.
    /// - Returns: A provider of the subscript's declared type.
    @inlinable
    public func shared<Value: Sendable, Argument: Hashable & Sendable>(
        _ argument: Argument,
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        isolation: (any Actor)? = #isolation,
        _ make: @escaping () -> Value
    ) -> Provider<Value> {
        Provider(self, .shared, RegistrationKey.TypedArgument(argument), name, fileID, line, column, isolation, make)
    }

    /// A provider whose instance is built once per outermost resolution, and shared by
    /// everything that resolution builds.
    ///
    /// Some objects must be shared by the parts of one object graph, and by nothing else: a
    /// unit of work that the repositories of one checkout write to, a log that collects what
    /// one request did. A factory would give each part its own; a singleton would share one
    /// with every later checkout. A graph registration is built on the first resolution
    /// inside a top-level one (`container.checkout()`, or the first read of a `@Dependency`
    /// property), and every later resolution of it in the same container during that
    /// top-level resolution returns the same instance. The next top-level resolution gets a
    /// new one:
    ///
    /// ```swift
    /// var unitOfWork: Provider<UnitOfWork> { graph { UnitOfWork() } }
    /// var orders: Provider<OrderStore> { factory { OrderStore(work: self.unitOfWork()) } }
    /// var payments: Provider<PaymentStore> { factory { PaymentStore(work: self.unitOfWork()) } }
    /// var checkout: Provider<Checkout> {
    ///     factory { Checkout(orders: self.orders(), payments: self.payments()) }
    /// }
    ///
    /// let checkout = container.checkout()   // its orders and payments share one unit of work
    /// ```
    ///
    /// Resolved on its own, outside any other resolution, it builds a new instance each
    /// time, as a factory does. A task that a construction starts is not part of that
    /// construction's resolution: what it resolves is a top-level resolution of its own. The
    /// container keeps nothing: the instances go when the top-level resolution returns
    /// (unless something it built holds them). An override keeps the scope.
    /// This is the scope Swinject calls `.graph`, its default.
    ///
    /// - Parameters:
    ///   - name: The registration's name in messages; the property's name by default.
    ///   - fileID: Part of the registration's identity; leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    ///   - isolation: The registration's actor; a main-actor registration is checked to
    ///     resolve on the main actor. Leave the default, or forward it from a helper.
    ///   - make: Builds the instance of one top-level resolution. It runs without any
    ///     container lock held and may resolve other dependencies through `self`.
    /// - Returns: A provider of the property's declared type.
    @inlinable
    public func graph<Value>(
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        isolation: (any Actor)? = #isolation,
        _ make: @escaping () -> Value
    ) -> Provider<Value> {
        Provider(self, .graph, nil, name, fileID, line, column, isolation, make)
    }

    /// A provider of one instance per distinct argument and outermost resolution.
    ///
    /// Declare it in a subscript: within one top-level resolution, each argument has its
    /// own instance, shared as with ``graph(name:fileID:line:column:isolation:_:)->Provider<Value>``:
    ///
    /// ```swift
    /// subscript(draft id: Order.ID) -> Provider<Draft> {
    ///     graph(id) { Draft(orderID: id) }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - argument: The value that identifies the instance.
    ///   - name: The registration's name in messages; the subscript's name by default.
    ///   - fileID: Part of the registration's identity; leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    ///   - isolation: The registration's actor; a main-actor registration is checked to
    ///     resolve on the main actor. Leave the default, or forward it from a helper.
    ///   - make: Builds the instance for `argument`.
    /// - Returns: A provider of the subscript's declared type.
    @inlinable
    public func graph<Value, Argument: Hashable & Sendable>(
        _ argument: Argument,
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        isolation: (any Actor)? = #isolation,
        _ make: @escaping () -> Value
    ) -> Provider<Value> {
        Provider(self, .graph, RegistrationKey.TypedArgument(argument), name, fileID, line, column, isolation, make)
    }
}

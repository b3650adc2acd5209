// The floor: the same object graph wired by hand, with no container at all.

/// A hand-written composition root: what an app without a DI package would keep.
final class HandWiredRoot: @unchecked Sendable {
    // @unchecked: `client` is built in `init` and never changes; `makeStubbableClient`
    // is only touched by the single-threaded scenario F.
    let client: any Client = LiveClient()
    var makeStubbableClient: () -> any Client = { LiveClient() }

    func makeLeaf() -> Leaf { Leaf() }

    func makeChain() -> ChainE {
        ChainE(d: ChainD(c: ChainC(b: ChainB(a: ChainA()))))
    }
}

/// An object that receives its dependency through its initializer.
final class HandWiredHolder {
    let client: any Client
    init(client: any Client) { self.client = client }
}

/// Scenario G's floor: the handler built by hand from the user and the root's client.
@inline(__always)
func serveRequestDirectly<Response>(
    root: HandWiredRoot, user: String, _ respond: (RequestHandler) -> Response
) -> Response {
    respond(RequestHandler(user: user, client: root.client))
}

func directContestant() -> Contestant {
    let root = HandWiredRoot()
    let shared = Shared(value: root)
    return Contestant(
        name: "Direct",
        isPeer: false,
        check: {
            precondition(root.makeLeaf() !== root.makeLeaf())
            precondition(root.client === root.client)
            root.makeStubbableClient = { StubClient() }
            precondition(root.makeStubbableClient().isStub)
            precondition(serveRequestDirectly(root: root, user: signedInUser) { handler in
                handler.user == signedInUser && handler.client === root.client
            })
        },
        measures: [
            .leaf: { count in timeLoop(count) { root.makeLeaf() } },
            .singleton: { count in timeLoop(count) { root.client } },
            .chain: { count in timeLoop(count) { root.makeChain() } },
            .property: { count in
                timeLoop(count) {
                    let holder = HandWiredHolder(client: root.client)
                    blackHole(holder)
                    return holder.client
                }
            },
            .concurrentSingleton: { count in
                timeConcurrently(count) { perThread in
                    let root = shared.value
                    _ = timeLoop(perThread) { root.client }
                }
            },
            .override: { count in
                timeLoop(count) {
                    root.makeStubbableClient = { StubClient() }
                    return root.makeStubbableClient()
                }
            },
            .requestScope: { count in
                let user = signedInUser
                return timeLoop(count) { serveRequestDirectly(root: root, user: user, respond(with:)) }
            },
        ]
    )
}

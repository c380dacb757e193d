package hostfns

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"strconv"

	"github.com/toolsearch/toolsearch/wasm"
)

// MaxRandomBytes is the most crypto.getRandomValues fills in one call, as in the Web Crypto API (a larger
// array throws QuotaExceededError).
const MaxRandomBytes = 65536

// randomSource is one run's randomness: the host's (crypto/rand) for a run without a seed, a ChaCha8 stream of
// the seed otherwise, so a run with RunOptions.RandomSeed draws the same Math.random sequence and the same
// crypto.getRandomValues bytes every time.
type randomSource struct {
	seeded *rand.ChaCha8
}

func newRandomSource(seed uint64) randomSource {
	if seed == 0 {
		return randomSource{}
	}
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], seed)
	return randomSource{seeded: rand.NewChaCha8(key)}
}

func (r randomSource) read(p []byte) {
	if r.seeded != nil {
		_, _ = r.seeded.Read(p)
		return
	}
	_, _ = crand.Read(p) // never fails (it panics rather than return short on every supported platform)
}

// hostRandom hands the guest n random bytes, hex-encoded: the prelude seeds Math.random from 16 of them on its
// first use in each run, and crypto.getRandomValues asks for what it fills.
func hostRandom(ctx context.Context, args *wasm.Args) (string, error) {
	st := state(ctx)
	s, ok := shortArg(args, 0, 8)
	n, err := strconv.Atoi(s)
	if args.Len() < 1 || !ok || err != nil || n < 0 || n > MaxRandomBytes {
		return "", &wasm.JSException{Message: "crypto: bad call"}
	}
	buf := make([]byte, n)
	st.random.read(buf)
	return hex.EncodeToString(buf), nil
}

package broker

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/lumen-home/lumen/internal/atomicfile"
)

// The journal budget is what everything JetStream keeps in a data
// directory may take: the LUMEN stream, the snapshot bucket and the MQTT
// sessions together (the server's store limit). The LUMEN stream gets
// StreamBytes of it, the others share the rest.
const (
	// MinBudget is the smallest budget a daemon starts with: below it
	// the journal could not hold a day of a light.
	MinBudget int64 = 1 << 20
	// maxReserve is the most free space kept back from the journal
	// (Reserve).
	maxReserve int64 = 8 << 20
)

// BudgetFile is where a budget chosen from the free space is kept,
// under the data directory, so that it is chosen once.
const BudgetFile = "budget.json"

// ChooseBudget is the budget of a data directory whose file system has
// free bytes available and whose journal already takes used bytes: three
// quarters of both, at most DefaultMaxBytes. The quarter left keeps room
// for the reserve and what the file system needs besides.
func ChooseBudget(free, used int64) int64 {
	total := max(free, 0) + max(used, 0)
	return min(DefaultMaxBytes, total/4*3)
}

// FloorBudget is budget raised, when the journal already takes more than
// three quarters of it, to what puts the journal at three quarters: a
// budget below what the journal holds would refuse every input (the
// stream discards nothing), while at three quarters the lights purge
// what their snapshots cover.
func FloorBudget(budget, used int64) int64 {
	return max(budget, used+used/3)
}

// StreamBytes is the LUMEN stream's share of a budget: seven eighths,
// the rest for the snapshots and the MQTT sessions.
func StreamBytes(budget int64) int64 {
	return budget - budget/8
}

// Reserve is the free space kept back on the data directory's file
// system for a budget: new inputs are refused below it, so that what was
// already accepted (outputs, snapshots, a compaction rewriting a 4 MB
// block) can still be written. 8 MiB, or an eighth of a smaller budget:
// the quarter of the disk the budget leaves out holds it.
func Reserve(budget int64) int64 {
	return min(maxReserve, budget/8)
}

// Budget is the journal budget a daemon runs with, and how it came to be.
type Budget struct {
	// Bytes is the budget (the server's store limit).
	Bytes int64
	// Used is what the journal took on disk at start.
	Used int64
	// Free is what the file system had available at start.
	Free int64
	// Note is what start-up says about it: how it was chosen, and
	// whether it was raised or does not fit the disk.
	Note string
}

// budgetRecord is BudgetFile.
type budgetRecord struct {
	MaxBytes int64 `json:"max_bytes"`
	// Why it was chosen: the free space and the journal's size then.
	Free    int64 `json:"free"`
	Journal int64 `json:"journal"`
}

// ResolveBudget decides the budget of the journal in dataDir. given > 0
// is the operator's (--max-bytes, max_bytes:). Otherwise the budget
// chosen at the first start is read from BudgetFile, or chosen now from
// the free space (ChooseBudget) and kept there: recomputing it later,
// with a journal that has grown and less free space, could give less
// than the journal holds. Either way it is never below what the journal
// holds (FloorBudget), and Note says so.
func ResolveBudget(dataDir string, given int64) (Budget, error) {
	// Its file system's free space, and the place of BudgetFile.
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return Budget{}, fmt.Errorf("broker: create data directory: %w", err)
	}
	used, err := StoreBytes(dataDir)
	if err != nil {
		return Budget{}, err
	}
	free, ferr := FreeBytes(dataDir)
	b := Budget{Used: used, Free: free}
	file := filepath.Join(dataDir, BudgetFile)
	switch {
	case given > 0:
		b.Bytes = given
		b.Note = fmt.Sprintf("journal budget %s (--max-bytes)", Size(given))
	default:
		rec, err := readBudget(file)
		switch {
		case err == nil:
			b.Bytes = rec.MaxBytes
			b.Note = fmt.Sprintf("journal budget %s, chosen at the first start from the free space (kept in %s; give --max-bytes to change it)", Size(rec.MaxBytes), file)
		case !errors.Is(err, fs.ErrNotExist):
			return Budget{}, err
		case ferr != nil:
			// No way to tell the free space: the former default.
			b.Bytes = DefaultMaxBytes
			b.Note = fmt.Sprintf("journal budget %s (the free space of %s is unknown: %v)", Size(b.Bytes), dataDir, ferr)
		default:
			b.Bytes = ChooseBudget(free, used)
			if FloorBudget(b.Bytes, used) < MinBudget {
				return Budget{}, fmt.Errorf("broker: the disk of %s has only %s free: the journal's budget is 3/4 of it and must be at least %s; free some space there or give --data a larger disk", dataDir, Size(free), Size(MinBudget))
			}
			b.Bytes = FloorBudget(b.Bytes, used)
			if err := writeBudget(file, budgetRecord{MaxBytes: b.Bytes, Free: free, Journal: used}); err != nil {
				return Budget{}, err
			}
			b.Note = fmt.Sprintf("journal budget %s: 3/4 of the %s free (with the journal's %s), at most %s; kept in %s, give --max-bytes to change it",
				Size(b.Bytes), Size(free), Size(used), Size(DefaultMaxBytes), file)
		}
	}
	if floor := FloorBudget(b.Bytes, used); floor > b.Bytes {
		b.Note += fmt.Sprintf("; raised to %s: the journal already holds %s, and its lights purge what their snapshots cover from 3/4 of the budget", Size(floor), Size(used))
		b.Bytes = floor
	}
	if ferr == nil && b.Bytes > free+used {
		b.Note += fmt.Sprintf("; the disk has only %s free: when it fills, changes are refused (507) until there is room", Size(free))
	}
	return b, nil
}

func readBudget(file string) (budgetRecord, error) {
	var rec budgetRecord
	data, err := os.ReadFile(file)
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(data, &rec); err != nil || rec.MaxBytes <= 0 {
		return rec, fmt.Errorf("broker: %s is not a journal budget ({\"max_bytes\":N}): fix it, or remove it to choose the budget from the free space again", file)
	}
	return rec, nil
}

func writeBudget(file string, rec budgetRecord) error {
	data, _ := json.Marshal(rec)
	if err := atomicfile.WriteBytes(file, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("broker: keep the journal budget: %w", err)
	}
	return nil
}

// StoreBytes is what the JetStream store under dataDir takes on disk (0
// when there is none yet).
func StoreBytes(dataDir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(filepath.Join(dataDir, "jetstream"), func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return nil // removed meanwhile
			}
			n += info.Size()
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("broker: size of the journal in %s: %w", dataDir, err)
	}
	return n, nil
}

// Size is n bytes for a person: 512 B, 1.5 KiB, 48.0 MiB, 1.00 GiB.
func Size(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
}

package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/internal/units"
	"github.com/gocu-dev/gocu/nvrtc"
)

func newCacheCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cache",
		Short: "Show or clear the cache of compiled kernels and autotuning choices",
		Long: `gocu caches compiled GPU code in $GOCU_CACHE_DIR, or the user cache
directory's gocu folder, and the choices of gocu.Autotune in its autotune
folder. Entries are verified on every read; a bad entry is compiled or
tuned again. GOCU_CACHE=off turns the cache off. "gocu cache clear"
removes both.`,
		Example: "  gocu cache info\n  gocu cache clear",
	}
	cmd.AddCommand(&cobra.Command{
		Use:     "info",
		Short:   "Print the cache directory, its compiled kernels and autotuning choices, and their size",
		Example: "  gocu cache info",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := nvrtc.NewCache(nvrtc.CacheConfig{})
			if err != nil {
				return err
			}
			info, err := c.Info()
			if err != nil {
				return err
			}
			state := "on"
			if !info.Enabled {
				state = "off (GOCU_CACHE=off)"
			}
			tune, err := gocu.AutotuneStoreInfo()
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "dir:      %s\nstate:    %s\nentries:  %d\nsize:     %s\nautotune: %d choices, %s, in %s\n",
				info.Dir, state, info.Entries, units.Bytes(info.Bytes), tune.Entries, units.Bytes(tune.Bytes), tune.Dir)
			return nil
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:     "clear",
		Short:   "Remove every compiled kernel and autotuning choice from the cache",
		Example: "  gocu cache clear",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := nvrtc.NewCache(nvrtc.CacheConfig{})
			if err != nil {
				return err
			}
			n, err := c.Clear()
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "removed %d entries from %s\n", n, c.Dir())
			m, err := gocu.ClearAutotuneStore()
			if err != nil {
				return err
			}
			tune, err := gocu.AutotuneStoreInfo()
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "removed %d autotuning choices from %s\n", m, tune.Dir)
			return nil
		},
	})
	return cmd
}

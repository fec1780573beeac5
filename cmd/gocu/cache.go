package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gocu-dev/gocu/internal/units"
	"github.com/gocu-dev/gocu/nvrtc"
)

func newCacheCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cache",
		Short: "Show or clear the compiled-kernel cache",
		Long: `gocu caches compiled GPU code in $GOCU_CACHE_DIR, or the user cache
directory's gocu folder. Entries are verified on every read; a bad entry
is recompiled. GOCU_CACHE=off turns the cache off.`,
		Example: "  gocu cache info\n  gocu cache clear",
	}
	cmd.AddCommand(&cobra.Command{
		Use:     "info",
		Short:   "Print the cache directory, its entries and their size",
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
			fmt.Fprintf(cmd.OutOrStdout(), "dir:     %s\nstate:   %s\nentries: %d\nsize:    %s\n",
				info.Dir, state, info.Entries, units.Bytes(info.Bytes))
			return nil
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:     "clear",
		Short:   "Remove every cache entry",
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
			return nil
		},
	})
	return cmd
}
